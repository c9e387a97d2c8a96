/// AVCC (length-prefixed NAL units) to Annex B (start-code-prefixed) conversion for one access
/// unit, in the form a transport stream carries it:
///
/// ```
/// 00 00 00 01 09 F0            access unit delimiter (any in the sample are dropped)
/// 00 00 00 01 SPS 00 00 00 01 PPS   from the avcC, in front of an IDR that lacks them
/// 00 00 00 01 NAL ...          each NAL of the sample, in order
/// ```
///
/// Conversion is two passes: `AVCCScanner.summarize` validates every length against the sample
/// (once, when the sample is read) and `inspect` measures the output from that summary; `write`
/// then emits it, checking only that the sample still matches what was measured. Neither
/// allocates.
public enum AnnexB {
  /// nal_unit_type of an access unit delimiter.
  public static let audType: UInt8 = 9
  /// Bytes of the access unit delimiter we insert (start code included).
  public static let audSize = 6

  /// What `inspect` learnt about one access unit.
  public struct AccessUnitInfo: Equatable, Sendable {
    /// Bytes of the Annex B output.
    public var size: Int
    /// True when the avcC's SPS and PPS go in front of the unit.
    public var insertsParameterSets: Bool
    /// True when the unit has at least one VCL NAL and all of them have nal_ref_idc 0, so no
    /// other frame refers to it and it can be dropped alone.
    public var isDisposable: Bool
    /// True when the unit holds an IDR slice (nal_unit_type 5).
    public var containsIDR: Bool
  }

  /// Validates an AVCC sample and measures its Annex B form.
  ///
  /// - Parameters:
  ///   - avcc: the sample, NAL units each preceded by a big-endian length of
  ///     `format.nalLengthSize` bytes.
  ///   - isKeyframe: the encoder's keyframe flag; parameter sets go in front of a keyframe or of
  ///     a unit with an IDR slice.
  /// - Throws: `FormatError.nalLengthPastEnd` when a length (or a length prefix itself) runs
  ///   past the end of the sample; for a cut-off prefix `length` is the prefix size.
  /// - Complexity: O(number of NAL units).
  public static func inspect(
    avcc: UnsafeRawBufferPointer, format: H264Format, isKeyframe: Bool
  ) throws(FormatError) -> AccessUnitInfo {
    let summary = try AVCCScanner.summarize(avcc, lengthSize: format.nalLengthSize)
    return inspect(summary: summary, format: format, isKeyframe: isKeyframe)
  }

  /// Measures the Annex B form of a sample already walked by `AVCCScanner.summarize`.
  /// - Complexity: O(1).
  public static func inspect(summary: AVCCSummary, format: H264Format, isKeyframe: Bool)
    -> AccessUnitInfo
  {
    inspect(
      summary: summary, parameterSetsSize: parameterSetsSize(format), isKeyframe: isKeyframe)
  }

  /// `inspect(summary:format:isKeyframe:)` with the format's `parameterSetsSize` computed once.
  static func inspect(summary: AVCCSummary, parameterSetsSize: Int, isKeyframe: Bool)
    -> AccessUnitInfo
  {
    var size = audSize + summary.annexBSize
    let inserts = (isKeyframe || summary.containsIDR) && !summary.hasParameterSets
    if inserts { size += parameterSetsSize }
    return AccessUnitInfo(
      size: size, insertsParameterSets: inserts, isDisposable: summary.isDisposable,
      containsIDR: summary.containsIDR)
  }

  /// Converts an AVCC sample into `out` and returns the bytes written.
  ///
  /// - Precondition: `out` holds at least `inspect(...).size` bytes.
  public static func convert(
    avcc: UnsafeRawBufferPointer, format: H264Format, isKeyframe: Bool,
    into out: UnsafeMutableRawBufferPointer
  ) throws(FormatError) -> Int {
    let info = try inspect(avcc: avcc, format: format, isKeyframe: isKeyframe)
    precondition(out.count >= info.size, "output buffer smaller than the Annex B unit")
    var sink = FlatByteWriter(out)
    let written = write(avcc: avcc, format: format, info: info, into: &sink)
    assert(written, "a sample inspect accepted")
    return sink.position
  }

  /// An upper bound of the Annex B size of any `payloadSize`-byte sample of `format`.
  ///
  /// Each NAL of n >= 1 bytes grows from `nalLengthSize + n` to `4 + n` bytes, so the worst
  /// case is many 1-byte NAL units.
  public static func maximumSize(payloadSize: Int, format: H264Format) -> Int {
    let lengthSize = format.nalLengthSize
    let payload = max(0, payloadSize)
    let maximumNALCount = payload / (lengthSize + 1)
    return audSize + parameterSetsSize(format) + payload + maximumNALCount * (4 - lengthSize)
  }

  /// Writes a sample measured by `inspect`.
  ///
  /// - Returns: false, with fewer than `info.size` bytes written, when the sample does not match
  ///   the measurement (a summary of another payload); no byte is read past the sample nor
  ///   written past `info.size`.
  static func write<Sink: PacketByteWriter>(
    avcc: UnsafeRawBufferPointer, format: H264Format, info: AccessUnitInfo, into sink: inout Sink
  ) -> Bool {
    write(
      avcc: avcc, lengthSize: format.nalLengthSize,
      parameterSets: info.insertsParameterSets ? format : nil, info: info, into: &sink)
  }

  /// `write(avcc:format:info:into:)` with the format only where its parameter sets go in:
  /// a unit without them needs no copy of the format (and no reference counting of its arrays).
  static func write<Sink: PacketByteWriter>(
    avcc: UnsafeRawBufferPointer, lengthSize: Int, parameterSets: H264Format?,
    info: AccessUnitInfo, into sink: inout Sink
  ) -> Bool {
    sink.writeStartCode()
    sink.write(byte: audType)
    // primary_pic_type 7 (any slice type) and the RBSP stop bit.
    sink.write(byte: 0xF0)
    var written = audSize
    if info.insertsParameterSets {
      guard let format = parameterSets else { return false }
      for set in format.sps {
        sink.writeStartCode()
        set.withUnsafeBytes { sink.write($0) }
      }
      for set in format.pps {
        sink.writeStartCode()
        set.withUnsafeBytes { sink.write($0) }
      }
      written += parameterSetsSize(format)
    }
    var offset = 0
    while offset + lengthSize <= avcc.count {
      let length = readLength(avcc, at: offset, size: lengthSize)
      let start = offset + lengthSize
      guard length <= avcc.count - start else { return false }
      offset = start + length
      guard length > 0, avcc[start] & 0x1F != audType else { continue }
      guard written + 4 + length <= info.size else { return false }
      written += 4 + length
      sink.writeStartCode()
      sink.write(UnsafeRawBufferPointer(rebasing: avcc[start..<offset]))
    }
    return written == info.size
  }

  static func parameterSetsSize(_ format: H264Format) -> Int {
    var size = 0
    for set in format.sps { size += 4 + set.count }
    for set in format.pps { size += 4 + set.count }
    return size
  }

  static func readLength(_ bytes: UnsafeRawBufferPointer, at offset: Int, size: Int) -> Int {
    var length = 0
    for index in offset..<offset + size { length = length << 8 | Int(bytes[index]) }
    return length
  }
}
