/// The picture size an H.264 SPS announces (ITU-T H.264 7.3.2.1.1), after cropping.
///
/// Containers state the size beside the stream: the flv muxer's `onMetaData`, an MP4 track
/// header and sample entry. Decoders take the size from the SPS itself, so only those
/// descriptions depend on this.
public struct H264PictureSize: Hashable, Sendable {
  /// Width in luma samples, after cropping.
  public var width: Int
  /// Height in luma samples, after cropping.
  public var height: Int

  public init(width: Int, height: Int) {
    self.width = width
    self.height = height
  }

  /// Parses an SPS NAL unit (header byte included, emulation prevention bytes still in place).
  /// Returns nil when the SPS is truncated or a field is out of range.
  public init?(sps: [UInt8]) {
    guard let fields = Self.parse(sps: sps) else { return nil }
    width = fields.width
    height = fields.height
  }

  /// Reads the SPS up to its VUI's colour description: the size after cropping, and the colour
  /// when the VUI states one (nil when the SPS has no VUI or it ends before the colour).
  static func parse(sps: [UInt8]) -> (width: Int, height: Int, colour: VideoColour?)? {
    var bits = BitReader(removingEmulationPrevention: sps.dropFirst())
    guard let profile = bits.read(8), bits.read(16) != nil, bits.ue() != nil else { return nil }
    var chromaFormat = 1
    var separateColourPlanes = false
    if [100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135].contains(profile) {
      guard let format = bits.ue(), format <= 3 else { return nil }
      chromaFormat = format
      if format == 3 {
        guard let flag = bits.read(1) else { return nil }
        separateColourPlanes = flag == 1
      }
      guard bits.ue() != nil, bits.ue() != nil, bits.read(1) != nil,
        let scalingMatrix = bits.read(1)
      else { return nil }
      if scalingMatrix == 1 {
        for list in 0..<(format == 3 ? 12 : 8) {
          guard let present = bits.read(1) else { return nil }
          if present == 1 {
            guard bits.skipScalingList(size: list < 6 ? 16 : 64) else { return nil }
          }
        }
      }
    }
    guard bits.ue() != nil, let orderType = bits.ue() else { return nil }
    switch orderType {
    case 0:
      guard bits.ue() != nil else { return nil }
    case 1:
      guard bits.read(1) != nil, bits.se() != nil, bits.se() != nil, let cycle = bits.ue(),
        cycle <= 255
      else { return nil }
      for _ in 0..<cycle where bits.se() == nil { return nil }
    case 2: break
    default: return nil
    }
    guard bits.ue() != nil, bits.read(1) != nil, let widthInMBs = bits.ue(),
      let heightInMapUnits = bits.ue(), widthInMBs < 1024, heightInMapUnits < 1024,
      let frameMBsOnly = bits.read(1)
    else { return nil }
    if frameMBsOnly == 0 { guard bits.read(1) != nil else { return nil } }
    guard bits.read(1) != nil, let cropping = bits.read(1) else { return nil }
    var crop = (left: 0, right: 0, top: 0, bottom: 0)
    if cropping == 1 {
      guard let left = bits.ue(), let right = bits.ue(), let top = bits.ue(),
        let bottom = bits.ue()
      else { return nil }
      crop = (left, right, top, bottom)
    }
    let monochrome = chromaFormat == 0 || separateColourPlanes
    let cropX = monochrome ? 1 : (chromaFormat == 3 ? 1 : 2)
    let cropY = (monochrome ? 1 : (chromaFormat == 1 ? 2 : 1)) * (2 - frameMBsOnly)
    let width = (widthInMBs + 1) * 16 - cropX * (crop.left + crop.right)
    let height =
      (2 - frameMBsOnly) * (heightInMapUnits + 1) * 16 - cropY * (crop.top + crop.bottom)
    guard width > 0, height > 0 else { return nil }
    let colour = bits.read(1) == 1 ? VideoColour.read(vui: &bits) : nil
    return (width, height, colour)
  }
}

extension BitReader {
  /// Skips an SPS scaling_list() of `size` entries; false when the data runs out.
  mutating func skipScalingList(size: Int) -> Bool {
    var last = 8
    var next = 8
    for _ in 0..<size {
      if next != 0 {
        guard let delta = se() else { return false }
        next = (last + delta + 256) % 256
      }
      last = next == 0 ? last : next
    }
    return true
  }
}
