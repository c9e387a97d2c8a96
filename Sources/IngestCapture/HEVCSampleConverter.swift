import IngestCore

/// Turns the HEVC packets of one stream into VideoToolbox-style samples: length-prefixed NAL
/// units and an hvcC configuration that holds every parameter set.
///
/// hvc1 tracks (mp4, mov, mkv) keep their parameter sets in the hvcC and pass through unchanged.
/// hev1 tracks may repeat them in the samples, and Annex B input (MPEG-TS, raw .hevc) carries
/// them only there: VPS, SPS and PPS move from the samples into the configuration, which
/// changes whenever in-band parameter sets do; access unit delimiters are dropped. Annex B
/// samples are re-framed with 4-byte lengths.
public struct HEVCSampleConverter {
  /// The configuration in force (nil until VPS, SPS and PPS have been seen).
  public private(set) var format: HEVCFormat?
  private let isAnnexB: Bool
  private let stream: Int

  /// - Parameters:
  ///   - extradata: the container's codec configuration: an hvcC record, Annex B parameter
  ///     sets, or nothing.
  ///   - stream: the stream index, for errors.
  public init(extradata: [UInt8], stream: Int) throws(CaptureError) {
    self.stream = stream
    // An hvcC starts with configurationVersion 1; Annex B with a start code's zero byte.
    if extradata.first == 1 {
      isAnnexB = false
      do { format = try HEVCFormat(hvcC: extradata) } catch {
        throw .hevc(stream: stream, packet: -1, error)
      }
    } else {
      isAnnexB = true
      let units = AnnexBUnits.split(extradata)
      var sets = ParameterSets()
      for unit in units { _ = sets.take(unit) }
      if sets.isComplete {
        format = try sets.format(replacing: nil, nalLengthSize: 4, stream: stream, packet: -1)
      }
    }
  }

  /// Converts one packet.
  ///
  /// - Returns: the length-prefixed payload (nil if nothing but parameter sets or delimiters
  ///   remained) and whether the configuration changed with this packet.
  /// - Throws: `CaptureError.hevc` for a NAL length past the end of the packet, or for in-band
  ///   parameter sets that do not describe a stream.
  public mutating func convert(_ data: [UInt8], packet: Int) throws(CaptureError) -> (
    payload: [UInt8]?, formatChanged: Bool
  ) {
    let lengthSize = isAnnexB ? 4 : format?.nalLengthSize ?? 4
    var units: [[UInt8]]
    if isAnnexB {
      units = AnnexBUnits.split(data)
    } else {
      var inBand = false
      var bounds: [Range<Int>] = []
      let error = data.withUnsafeBytes { raw -> FormatError? in
        do throws(FormatError) {
          try AVCCScanner.forEachNAL(in: raw, lengthSize: lengthSize) { offset, length in
            let type = HEVCNALUnitType(headerByte: raw[offset])
            if type == .accessUnitDelimiter || ParameterSets.holds(type) { inBand = true }
            bounds.append(offset..<offset + length)
          }
          return nil
        } catch {
          return error
        }
      }
      if let error { throw .hevc(stream: stream, packet: packet, error) }
      // The common case, hvc1: nothing to move, the packet is the sample.
      guard inBand else { return (data.isEmpty ? nil : data, false) }
      units = bounds.map { Array(data[$0]) }
    }
    var sets = ParameterSets()
    var payload: [UInt8] = []
    payload.reserveCapacity(data.count + 16)
    for unit in units where !sets.take(unit) {
      guard HEVCNALUnitType(headerByte: unit[0]) != .accessUnitDelimiter else { continue }
      for shift in stride(from: (lengthSize - 1) * 8, through: 0, by: -8) {
        payload.append(UInt8(truncatingIfNeeded: unit.count >> shift))
      }
      payload += unit
    }
    var changed = false
    if !sets.isEmpty {
      let next = try sets.format(
        replacing: format, nalLengthSize: lengthSize, stream: stream, packet: packet)
      if let next, next != format {
        format = next
        changed = true
      }
    }
    return (payload.isEmpty ? nil : payload, changed)
  }

  /// VPS, SPS and PPS units gathered from one packet (or the extradata).
  private struct ParameterSets {
    var vps: [[UInt8]] = []
    var sps: [[UInt8]] = []
    var pps: [[UInt8]] = []

    static func holds(_ type: HEVCNALUnitType) -> Bool {
      type == .videoParameterSet || type == .sequenceParameterSet || type == .pictureParameterSet
    }

    var isEmpty: Bool { vps.isEmpty && sps.isEmpty && pps.isEmpty }
    var isComplete: Bool { !vps.isEmpty && !sps.isEmpty && !pps.isEmpty }

    /// Keeps `unit` if it is a parameter set; false for any other unit.
    mutating func take(_ unit: [UInt8]) -> Bool {
      switch HEVCNALUnitType(headerByte: unit[0]) {
      case .videoParameterSet: vps.append(unit)
      case .sequenceParameterSet: sps.append(unit)
      case .pictureParameterSet: pps.append(unit)
      default: return false
      }
      return true
    }

    /// The configuration with these sets in place of `current`'s of the same types; nil while
    /// some type has never been seen.
    func format(replacing current: HEVCFormat?, nalLengthSize: Int, stream: Int, packet: Int)
      throws(CaptureError) -> HEVCFormat?
    {
      let vps = vps.isEmpty ? current?.vps ?? [] : vps
      let sps = sps.isEmpty ? current?.sps ?? [] : sps
      let pps = pps.isEmpty ? current?.pps ?? [] : pps
      guard !vps.isEmpty, !sps.isEmpty, !pps.isEmpty else { return nil }
      do {
        return try HEVCFormat(
          vps: vps, sps: sps, pps: pps, nalLengthSize: nalLengthSize,
          minSpatialSegmentation: current?.minSpatialSegmentation ?? 0,
          parallelismType: current?.parallelismType ?? 0,
          averageFrameRate: current?.averageFrameRate ?? 0,
          constantFrameRate: current?.constantFrameRate ?? 0)
      } catch {
        throw .hevc(stream: stream, packet: packet, error)
      }
    }
  }
}
