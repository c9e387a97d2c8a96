import IngestCore

/// Turns the H.264 packets of one stream into VideoToolbox-style samples: AVCC payloads and an avcC
/// configuration.
///
/// Containers that store avcC (mp4, mov, flv, mkv) pass through unchanged. Annex B input (MPEG-TS,
/// raw .h264) is re-framed with 4-byte lengths; access unit delimiters are dropped and SPS/PPS move
/// from the samples into the configuration, which changes whenever in-band parameter sets do.
public struct H264SampleConverter {
  /// The configuration in force (nil until SPS and PPS have been seen).
  public private(set) var format: H264Format?
  private let isAnnexB: Bool
  private let stream: Int

  /// - Parameters:
  ///   - extradata: the container's codec configuration: an avcC record, Annex B parameter sets,
  ///     or nothing.
  ///   - stream: the stream index, for errors.
  public init(extradata: [UInt8], stream: Int) throws(CaptureError) {
    self.stream = stream
    if extradata.first == 1 {
      isAnnexB = false
      do {
        format = try H264Format(avcC: extradata)
      } catch {
        throw .h264(stream: stream, packet: -1, error)
      }
    } else {
      isAnnexB = true
      let units = AnnexBUnits.split(extradata)
      format = Self.format(
        sps: units.filter { $0.first.map { $0 & 0x1F == 7 } ?? false },
        pps: units.filter { $0.first.map { $0 & 0x1F == 8 } ?? false })
    }
  }

  /// Converts one packet.
  ///
  /// - Returns: the AVCC payload (nil if nothing but parameter sets or delimiters remained) and
  ///   whether the configuration changed with this packet.
  public mutating func convert(_ data: [UInt8], packet: Int) throws(CaptureError) -> (
    payload: [UInt8]?, formatChanged: Bool
  ) {
    guard isAnnexB else {
      let size = format?.nalLengthSize ?? 4
      let error = data.withUnsafeBytes { DumpFormat.validateNALUnits($0, lengthSize: size) }
      if let error { throw .h264(stream: stream, packet: packet, error) }
      return (data.isEmpty ? nil : data, false)
    }
    var sps: [[UInt8]] = []
    var pps: [[UInt8]] = []
    var payload: [UInt8] = []
    payload.reserveCapacity(data.count + 16)
    for unit in AnnexBUnits.split(data) {
      switch unit[0] & 0x1F {
      case 7: sps.append(unit)
      case 8: pps.append(unit)
      case 9: continue
      default:
        let count = UInt32(unit.count)
        payload += [
          UInt8(count >> 24), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF),
          UInt8(count & 0xFF),
        ]
        payload += unit
      }
    }
    var changed = false
    if !sps.isEmpty || !pps.isEmpty {
      let next = Self.format(
        sps: sps.isEmpty ? format?.sps ?? [] : sps,
        pps: pps.isEmpty ? format?.pps ?? [] : pps)
      if let next, next != format {
        format = next
        changed = true
      }
    }
    return (payload.isEmpty ? nil : payload, changed)
  }

  private static func format(sps: [[UInt8]], pps: [[UInt8]]) -> H264Format? {
    guard let first = sps.first, first.count >= 4, !pps.isEmpty else { return nil }
    return try? H264Format(
      profile: first[1], compatibility: first[2], level: first[3], nalLengthSize: 4, sps: sps,
      pps: pps)
  }
}
