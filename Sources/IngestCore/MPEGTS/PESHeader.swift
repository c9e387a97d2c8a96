/// The PES packet header we write in front of each access unit (ISO/IEC 13818-1, 2.4.3.6).
///
/// ```
/// 00 00 01 stream_id | PES_packet_length(16) | 10 00 0 1 0 0  (marker, data_alignment)
/// PTS_DTS_flags(2) 000000 | PES_header_data_length | PTS(5) [DTS(5)]
/// ```
public struct PESHeader: Equatable, Sendable {
  /// stream_id of the first (and only) video stream.
  public static let videoStreamID: UInt8 = 0xE0
  /// stream_id of an MPEG audio stream.
  public static let audioStreamID: UInt8 = 0xC0
  /// Largest header we write: 9 fixed bytes, PTS and DTS.
  public static let maximumSize = 19
  /// The largest PES_packet_length value; longer video PES use 0 (unbounded).
  public static let maximumPacketLength = 0xFFFF

  /// 0xE0 for video, 0xC0 for audio.
  public var streamID: UInt8
  /// Presentation time in 90 kHz ticks; written modulo 2^33.
  public var pts: Int64
  /// Decode time in 90 kHz ticks, or nil when it equals the presentation time.
  public var dts: Int64?

  /// Creates a header; a `dts` equal to `pts` is dropped, as the standard asks.
  public init(streamID: UInt8, pts: Int64, dts: Int64? = nil) {
    self.streamID = streamID
    self.pts = pts
    self.dts = dts.flatMap { Self.wrap($0) == Self.wrap(pts) ? nil : $0 }
  }

  /// Bytes this header occupies.
  public var size: Int { dts == nil ? 14 : 19 }

  /// The PES_packet_length for `payloadSize` elementary stream bytes, or 0 when it does not fit
  /// (only allowed for video).
  public func packetLength(payloadSize: Int) -> Int {
    let length = size - 6 + payloadSize
    return length <= Self.maximumPacketLength ? length : 0
  }

  /// Writes the header at `offset` of `out` (which must have `size` bytes there).
  public func write(
    to out: UnsafeMutableRawBufferPointer, at offset: Int, payloadSize: Int
  ) {
    let length = packetLength(payloadSize: payloadSize)
    out[offset] = 0
    out[offset + 1] = 0
    out[offset + 2] = 1
    out[offset + 3] = streamID
    out[offset + 4] = UInt8(length >> 8)
    out[offset + 5] = UInt8(length & 0xFF)
    // '10' marker, data_alignment_indicator: every PES starts an access unit.
    out[offset + 6] = 0x84
    if let dts {
      out[offset + 7] = 0xC0
      out[offset + 8] = 10
      Self.writeTimestamp(pts, prefix: 0b0011, to: out, at: offset + 9)
      Self.writeTimestamp(dts, prefix: 0b0001, to: out, at: offset + 14)
    } else {
      out[offset + 7] = 0x80
      out[offset + 8] = 5
      Self.writeTimestamp(pts, prefix: 0b0010, to: out, at: offset + 9)
    }
  }

  /// Reduces a 90 kHz time to the 33 bits a PTS or DTS field holds.
  @inlinable public static func wrap(_ ticks: Int64) -> Int64 { ticks & 0x1_FFFF_FFFF }

  /// Writes a 33-bit timestamp in the 5-byte PES form: 4-bit `prefix`, then bits 32-30, 29-15
  /// and 14-0 each followed by a marker bit.
  public static func writeTimestamp(
    _ ticks: Int64, prefix: UInt8, to out: UnsafeMutableRawBufferPointer, at offset: Int
  ) {
    let t = UInt64(bitPattern: wrap(ticks))
    out[offset] = prefix << 4 | UInt8(truncatingIfNeeded: t >> 29) & 0x0E | 1
    out[offset + 1] = UInt8(truncatingIfNeeded: t >> 22)
    out[offset + 2] = UInt8(truncatingIfNeeded: t >> 14) & 0xFE | 1
    out[offset + 3] = UInt8(truncatingIfNeeded: t >> 7)
    out[offset + 4] = UInt8(truncatingIfNeeded: t << 1) | 1
  }

  /// Reads a 5-byte PES timestamp; nil when a marker bit is missing.
  public static func readTimestamp(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Int64? {
    let b0 = Int64(bytes[offset])
    let b1 = Int64(bytes[offset + 1])
    let b2 = Int64(bytes[offset + 2])
    let b3 = Int64(bytes[offset + 3])
    let b4 = Int64(bytes[offset + 4])
    guard b0 & 1 == 1, b2 & 1 == 1, b4 & 1 == 1 else { return nil }
    return (b0 >> 1 & 0x07) << 30 | b1 << 22 | (b2 >> 1) << 15 | b3 << 7 | b4 >> 1
  }
}
