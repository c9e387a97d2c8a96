import CTransportCC
import Testing

/// The transport-cc feedback parser `ingest-whip` reads the receiver's RTCP with
/// (draft-holmer-rmcat-transport-wide-cc-extensions-01, section 3.1), on hand-built FCIs.
@Suite struct TransportCCFeedbackTests {
  /// A feedback on 20 packets from sequence 65530 (it wraps): a run-length chunk (5 received,
  /// small deltas), a one-bit status vector (14 packets, 3 of them not received) and a
  /// two-bit one (one packet with a large, negative delta, then padding symbols).
  static let feedback: [UInt8] =
    [
      0xFF, 0xFA,  // base sequence number 65530
      0x00, 0x14,  // packet status count 20
      0x00, 0x00, 0x10,  // reference time 16 x 64 ms
      0x07,  // feedback packet count
      0x20, 0x05,  // run length: status 1 (small delta), 5 packets
      0xA7, 0xFE,  // one-bit vector: 1 0 0 1 1 1 1 1 1 1 1 1 1 0
      0xE0, 0x00,  // two-bit vector: 2 (large delta), then unused symbols
      4, 8, 12, 16, 20,  // the run's deltas (x 250 us)
      40,  // the vector's first packet
    ] + [UInt8](repeating: 4, count: 10)  // its other ten received
    + [0xFF, 0xF8]  // the large delta: -8 x 250 us

  static func parse(_ bytes: [UInt8], capacity: Int = 64) -> (
    count: Int32, header: ingest_twcc_header, packets: [ingest_twcc_packet]
  ) {
    var header = ingest_twcc_header()
    var packets = [ingest_twcc_packet](repeating: ingest_twcc_packet(), count: capacity)
    let count = ingest_twcc_parse(bytes, bytes.count, &header, &packets, capacity)
    return (count, header, Array(packets.prefix(max(0, Int(count)))))
  }

  @Test func runLengthAndStatusVectorChunks() throws {
    let (count, header, packets) = Self.parse(Self.feedback)
    #expect(count == 20)
    #expect(header.base_sequence == 65530)
    #expect(header.status_count == 20)
    #expect(header.reference_us == 1_024_000)
    #expect(header.feedback_count == 7)
    #expect(packets.map(\.sequence) == (0..<20).map { UInt16(truncatingIfNeeded: 65530 + $0) })
    let lost = packets.indices.filter { packets[$0].status == UInt8(INGEST_TWCC_NOT_RECEIVED) }
    #expect(lost == [6, 7, 18])
    #expect(packets[19].status == UInt8(INGEST_TWCC_LARGE_DELTA))
    // Each arrival is the previous received one's plus its delta, the first the reference
    // time's; the large delta goes back in time.
    let arrivals = packets.filter { $0.status != UInt8(INGEST_TWCC_NOT_RECEIVED) }.map(\.arrival_us)
    let expected: [Int64] =
      [1_025_000, 1_027_000, 1_030_000, 1_034_000, 1_039_000, 1_049_000]
      + (1...10).map { 1_049_000 + Int64($0) * 1000 } + [1_057_000]
    #expect(arrivals == expected)
  }

  @Test func aNegativeReferenceTime() {
    var bytes = Self.feedback
    bytes[4...6] = [0xFF, 0xFF, 0xFF]  // -1 x 64 ms
    let (count, header, packets) = Self.parse(bytes)
    #expect(count == 20)
    #expect(header.reference_us == -64_000)
    #expect(packets[0].arrival_us == -63_000)
  }

  @Test func malformedFeedbackIsRefused() {
    // Deltas cut short, a chunk missing, a reserved status, a header alone.
    #expect(Self.parse(Array(Self.feedback.dropLast())).count == -1)
    #expect(Self.parse(Array(Self.feedback.prefix(12))).count == -1)
    var reserved = Self.feedback
    reserved[8] = 0x60  // run length with status 3
    #expect(Self.parse(reserved).count == -1)
    #expect(Self.parse(Array(Self.feedback.prefix(7))).count == -1)
    // More packets than there is room for.
    #expect(Self.parse(Self.feedback, capacity: 19).count == -1)
  }
}
