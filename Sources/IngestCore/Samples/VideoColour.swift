/// The colour description of a video stream, from the video signal type of its SPS's VUI
/// (H.264 E.1.1, H.265 E.2.1): the code points of ITU-T H.273, which a container repeats so
/// that a player need not parse the SPS (an MP4 `colr` box).
///
/// ```
/// vui: aspect_ratio_info_present u(1) [idc u(8) [sar u(16) u(16) when 255]]
///      overscan_info_present u(1) [overscan_appropriate u(1)]
///      video_signal_type_present u(1) [video_format u(3) video_full_range u(1)
///        colour_description_present u(1) [colour_primaries u(8) transfer u(8) matrix u(8)]]
/// ```
public struct VideoColour: Hashable, Sendable {
  /// colour_primaries (1 BT.709, 9 BT.2020; 2 unspecified).
  public var primaries: UInt8
  /// transfer_characteristics (1 BT.709, 16 PQ, 18 HLG; 2 unspecified).
  public var transfer: UInt8
  /// matrix_coeffs (1 BT.709, 9 BT.2020 non-constant; 2 unspecified).
  public var matrix: UInt8
  /// video_full_range_flag: 0...255 rather than 16...235 for 8-bit luma.
  public var isFullRange: Bool

  public init(primaries: UInt8, transfer: UInt8, matrix: UInt8, isFullRange: Bool) {
    self.primaries = primaries
    self.transfer = transfer
    self.matrix = matrix
    self.isFullRange = isFullRange
  }

  /// The colour an H.264 SPS NAL unit (header byte included) states; nil when its VUI states
  /// no video signal type (or only unspecified code points in limited range), or the SPS ends
  /// early.
  public init?(h264SPS sps: [UInt8]) {
    guard let fields = H264PictureSize.parse(sps: sps), let colour = fields.colour else {
      return nil
    }
    self = colour
  }

  /// Reads the VUI from its first field up to the colour description.
  /// - Returns: nil when the VUI states no video signal type or the data runs out.
  static func read(vui bits: inout BitReader) -> VideoColour? {
    guard let aspectRatio = bits.read(1) else { return nil }
    if aspectRatio == 1 {
      guard let idc = bits.read(8) else { return nil }
      if idc == 255 { guard bits.read(32) != nil else { return nil } }
    }
    guard let overscan = bits.read(1) else { return nil }
    if overscan == 1 { guard bits.read(1) != nil else { return nil } }
    guard bits.read(1) == 1, bits.read(3) != nil, let fullRange = bits.read(1),
      let described = bits.read(1)
    else { return nil }
    // Without a description the code points are "unspecified" (2), the range still stated.
    var colour = VideoColour(primaries: 2, transfer: 2, matrix: 2, isFullRange: fullRange == 1)
    if described == 1 {
      guard let primaries = bits.read(8), let transfer = bits.read(8), let matrix = bits.read(8)
      else { return nil }
      colour.primaries = UInt8(primaries)
      colour.transfer = UInt8(transfer)
      colour.matrix = UInt8(matrix)
    }
    // Unspecified code points in limited range say nothing a player does not assume.
    return colour == VideoColour(primaries: 2, transfer: 2, matrix: 2, isFullRange: false)
      ? nil : colour
  }
}
