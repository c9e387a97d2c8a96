/// The leading fields of an HEVC sequence parameter set (ITU-T H.265, 7.3.2.2): what a track
/// description needs (profile, tier, level, picture size, sampling) and nothing after them.
///
/// ```
/// NAL header (2 bytes) | vps_id u(4) | max_sub_layers_minus1 u(3) | temporal_id_nesting u(1)
/// profile_tier_level(1, max_sub_layers_minus1)
///   general: profile_space u(2) tier u(1) profile_idc u(5) compatibility u(32)
///            constraint flags u(48) level_idc u(8)
///   per sub-layer: profile_present u(1) level_present u(1); padding to 8 sub-layers;
///                  then 88 bits of profile and 8 of level where present
/// sps_id ue | chroma_format_idc ue [separate_colour_plane u(1)] | width ue | height ue
/// conformance_window u(1) [left right top bottom ue] | bit_depth_luma_minus8 ue | chroma ue
/// ```
public struct HEVCSequenceParameterSet: Hashable, Sendable {
  /// general_profile_space, 0 for every profile defined so far.
  public var profileSpace: UInt8
  /// general_tier_flag: true for the High tier.
  public var isHighTier: Bool
  /// general_profile_idc (1 Main, 2 Main 10, 3 Main Still Picture, 4 range extensions, ...).
  public var profileIDC: UInt8
  /// general_profile_compatibility_flag[0...31], flag 0 in the most significant bit.
  public var compatibilityFlags: UInt32
  /// The 48 bits from general_progressive_source_flag to general_inbld_flag/reserved bit.
  public var constraintFlags: UInt64
  /// general_level_idc: 30 times the level number (93 is level 3.1).
  public var levelIDC: UInt8
  /// sps_max_sub_layers_minus1 + 1: temporal sub-layers, 1...7.
  public var maxSubLayers: Int
  /// sps_temporal_id_nesting_flag.
  public var temporalIDNesting: Bool
  /// chroma_format_idc: 0 monochrome, 1 4:2:0, 2 4:2:2, 3 4:4:4.
  public var chromaFormat: Int
  /// Luma and chroma sample bit depths, 8...16.
  public var bitDepthLuma: Int
  public var bitDepthChroma: Int
  /// The displayed size: the decoded size less the conformance window.
  public var width: Int
  public var height: Int
  /// The colour its VUI states, nil when it states none (or the SPS ends before it: the fields
  /// above do not depend on it, so a short VUI is no error).
  public var colour: VideoColour?

  /// Parses an SPS NAL unit (header included, emulation prevention bytes still in).
  /// - Throws: `FormatError.hevcSequenceParameterSet` naming the field where the data ran out
  ///   or a value left its range.
  public init(nalUnit: some Collection<UInt8>) throws(FormatError) {
    var reader = BitReader(removingEmulationPrevention: nalUnit)
    func read(_ count: Int, _ field: String) throws(FormatError) -> Int {
      guard let value = reader.read(count) else { throw .hevcSequenceParameterSet(field: field) }
      return value
    }
    func ue(_ field: String, maximum: Int) throws(FormatError) -> Int {
      guard let value = reader.ue(), value <= maximum else {
        throw .hevcSequenceParameterSet(field: field)
      }
      return value
    }
    let header = try read(16, "nal_unit_header")
    guard HEVCNALUnitType(rawValue: UInt8(header >> 9)) == .sequenceParameterSet else {
      throw .hevcSequenceParameterSet(field: "nal_unit_type")
    }
    _ = try read(4, "sps_video_parameter_set_id")
    let subLayersMinus1 = try read(3, "sps_max_sub_layers_minus1")
    guard subLayersMinus1 <= 6 else {
      throw .hevcSequenceParameterSet(field: "sps_max_sub_layers_minus1")
    }
    temporalIDNesting = try read(1, "sps_temporal_id_nesting_flag") == 1
    profileSpace = UInt8(try read(2, "general_profile_space"))
    isHighTier = try read(1, "general_tier_flag") == 1
    profileIDC = UInt8(try read(5, "general_profile_idc"))
    compatibilityFlags = UInt32(try read(32, "general_profile_compatibility_flag"))
    constraintFlags = UInt64(try read(48, "general_constraint_flags"))
    levelIDC = UInt8(try read(8, "general_level_idc"))
    var profilePresent: [Bool] = []
    var levelPresent: [Bool] = []
    for _ in 0..<subLayersMinus1 {
      profilePresent.append(try read(1, "sub_layer_profile_present_flag") == 1)
      levelPresent.append(try read(1, "sub_layer_level_present_flag") == 1)
    }
    if subLayersMinus1 > 0 {
      _ = try read(2 * (8 - subLayersMinus1), "reserved_zero_2bits")
    }
    for index in 0..<subLayersMinus1 {
      if profilePresent[index] {
        _ = try read(44, "sub_layer_profile")
        _ = try read(44, "sub_layer_profile")
      }
      if levelPresent[index] { _ = try read(8, "sub_layer_level_idc") }
    }
    maxSubLayers = subLayersMinus1 + 1
    _ = try ue("sps_seq_parameter_set_id", maximum: 15)
    chromaFormat = try ue("chroma_format_idc", maximum: 3)
    var separateColourPlanes = false
    if chromaFormat == 3 {
      separateColourPlanes = try read(1, "separate_colour_plane_flag") == 1
    }
    // 16888 is the largest width or height of level 6.2; anything above is not a real stream.
    let codedWidth = try ue("pic_width_in_luma_samples", maximum: 16888)
    let codedHeight = try ue("pic_height_in_luma_samples", maximum: 16888)
    var crop = (left: 0, right: 0, top: 0, bottom: 0)
    if try read(1, "conformance_window_flag") == 1 {
      crop.left = try ue("conf_win_left_offset", maximum: 16888)
      crop.right = try ue("conf_win_right_offset", maximum: 16888)
      crop.top = try ue("conf_win_top_offset", maximum: 16888)
      crop.bottom = try ue("conf_win_bottom_offset", maximum: 16888)
    }
    bitDepthLuma = try ue("bit_depth_luma_minus8", maximum: 8) + 8
    bitDepthChroma = try ue("bit_depth_chroma_minus8", maximum: 8) + 8
    // Offsets count chroma samples (table 6-1); without separate planes 4:2:0 and 4:2:2 halve
    // the width, 4:2:0 the height.
    let subsampled = !separateColourPlanes && (chromaFormat == 1 || chromaFormat == 2)
    let subWidth = subsampled ? 2 : 1
    let subHeight = !separateColourPlanes && chromaFormat == 1 ? 2 : 1
    width = codedWidth - subWidth * (crop.left + crop.right)
    height = codedHeight - subHeight * (crop.top + crop.bottom)
    guard width > 0 else { throw .hevcSequenceParameterSet(field: "pic_width_in_luma_samples") }
    guard height > 0 else {
      throw .hevcSequenceParameterSet(field: "pic_height_in_luma_samples")
    }
    colour = Self.readColour(&reader, subLayersMinus1: subLayersMinus1)
  }

  /// Reads on from log2_max_pic_order_cnt_lsb_minus4 to the VUI's colour description
  /// (H.265 7.3.2.2.1, 7.3.4, 7.3.7, E.2.1); nil when there is none or the data runs out.
  private static func readColour(_ r: inout BitReader, subLayersMinus1: Int) -> VideoColour? {
    guard let pocBitsMinus4 = r.ue(), pocBitsMinus4 <= 12, let ordering = r.read(1) else {
      return nil
    }
    for _ in (ordering == 1 ? 0 : subLayersMinus1)...subLayersMinus1 {
      guard r.ue() != nil, r.ue() != nil, r.ue() != nil else { return nil }
    }
    // Coding and transform block sizes, transform hierarchy depths.
    for _ in 0..<6 where r.ue() == nil { return nil }
    guard let scalingLists = r.read(1) else { return nil }
    if scalingLists == 1 {
      guard let present = r.read(1) else { return nil }
      if present == 1 {
        for size in 0..<4 {
          for _ in stride(from: 0, to: 6, by: size == 3 ? 3 : 1) {
            guard let predicted = r.read(1) else { return nil }
            if predicted == 0 {
              guard r.ue() != nil else { return nil }
              continue
            }
            if size > 1 { guard r.se() != nil else { return nil } }
            for _ in 0..<min(64, 1 << (4 + (size << 1))) where r.se() == nil { return nil }
          }
        }
      }
    }
    guard r.read(2) != nil, let pcm = r.read(1) else { return nil }  // amp, sao
    if pcm == 1 {
      guard r.read(8) != nil, r.ue() != nil, r.ue() != nil, r.read(1) != nil else { return nil }
    }
    guard let sets = r.ue(), sets <= 64 else { return nil }
    // NumDeltaPocs of each short-term reference picture set, for the sets predicted from it.
    var deltaPocs: [Int] = []
    for index in 0..<sets {
      let predicted = index == 0 ? 0 : r.read(1)
      guard let predicted else { return nil }
      if predicted == 1 {
        guard r.read(1) != nil, r.ue() != nil else { return nil }  // sign, abs_delta_rps
        var count = 0
        for _ in 0...deltaPocs[index - 1] {
          guard let used = r.read(1) else { return nil }
          let kept = used == 1 ? 1 : r.read(1)
          guard let kept else { return nil }
          count += kept
        }
        deltaPocs.append(count)
      } else {
        guard let negative = r.ue(), let positive = r.ue(), negative <= 16, positive <= 16
        else { return nil }
        for _ in 0..<(negative + positive) {
          guard r.ue() != nil, r.read(1) != nil else { return nil }
        }
        deltaPocs.append(negative + positive)
      }
    }
    guard let longTerm = r.read(1) else { return nil }
    if longTerm == 1 {
      guard let count = r.ue(), count <= 32 else { return nil }
      for _ in 0..<count {
        guard r.read(pocBitsMinus4 + 4) != nil, r.read(1) != nil else { return nil }
      }
    }
    // sps_temporal_mvp_enabled, strong_intra_smoothing_enabled, then the VUI's presence.
    guard r.read(2) != nil, r.read(1) == 1 else { return nil }
    return VideoColour.read(vui: &r)
  }

  /// The profile's name, or its number for profiles this package has no name for.
  public var profileName: String {
    switch profileIDC {
    case 1: "Main"
    case 2: "Main 10"
    case 3: "Main Still Picture"
    case 4: "Format Range Extensions"
    default: "profile \(profileIDC)"
    }
  }

  /// The level as written in the specification: "3.1" for level_idc 93.
  public var levelName: String {
    let tenths = Int(levelIDC) / 3
    return tenths % 10 == 0 ? "\(tenths / 10)" : "\(tenths / 10).\(tenths % 10)"
  }
}
