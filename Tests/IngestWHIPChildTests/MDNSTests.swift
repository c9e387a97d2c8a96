import Testing

@testable import ingest_whip

/// Resolving a browser's `.local` ICE candidates: the multicast DNS query and answer on the
/// wire, and the answer's candidates with their addresses.
@Suite struct MDNSTests {
  static let name = "0069c7a3-c0c7-49e9-ba40-e9ad56bebfde.local"

  @Test func theQueryAsksForTheAddressOfEachName() {
    let query = MDNSMessage.query(for: [Self.name])
    // ID 0, flags 0, one question.
    #expect(Array(query.prefix(12)) == [0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0])
    #expect(query[12] == 36)
    #expect(String(decoding: query[13..<49], as: UTF8.self) == String(Self.name.prefix(36)))
    #expect(Array(query[49...]) == [5] + Array("local".utf8) + [0, 0, 1, 0, 1])
  }

  /// A response (flags 0x8400) whose answer's name points back into its question, with an
  /// AAAA record beside the A record: the A record's address, by name.
  @Test func theResponsesARecordIsTheAddress() {
    let question = MDNSMessage.query(for: [Self.name.uppercased()])
    var response = [0, 0, 0x84, 0, 0, 1, 0, 2, 0, 0, 0, 0] + question[12...]
    // The name at offset 12 (a pointer), type AAAA, class IN (cache flush), TTL 120.
    response += [0xC0, 12, 0, 28, 0x80, 1, 0, 0, 0, 120, 0, 16] + [UInt8](repeating: 1, count: 16)
    response += [0xC0, 12, 0, 1, 0x80, 1, 0, 0, 0, 120, 0, 4, 198, 19, 74, 2]
    #expect(MDNSMessage.addresses(in: response) == [Self.name: "198.19.74.2"])
    // A query (our own, looped back) and a truncated response give nothing.
    #expect(MDNSMessage.addresses(in: question).isEmpty)
    #expect(MDNSMessage.addresses(in: Array(response.prefix(40))).isEmpty)
    // A pointer to itself does not loop.
    #expect(MDNSMessage.addresses(in: [0, 0, 0x84, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0xC0, 12]).isEmpty)
  }

  @Test func theAnswersLocalCandidatesTakeTheirAddresses() {
    let answer = [
      "v=0", "m=video 9 UDP/TLS/RTP/SAVPF 98",
      "a=candidate:1088783236 1 udp 2113937151 \(Self.name) 43170 typ host generation 0",
      "a=candidate:2 1 udp 2113937150 192.0.2.7 43171 typ host",
      "m=audio 9 UDP/TLS/RTP/SAVPF 111",
      "a=candidate:3 1 udp 2113937151 other.local 43172 typ host",
    ].joined(separator: "\r\n")
    let hidden = MDNSCandidates(answer: answer)
    #expect(hidden.names == [Self.name, "other.local"])
    let resolved = hidden.resolved([Self.name: "198.19.74.2"])
    #expect(resolved.count == 1)
    #expect(resolved.first?.section == 0)
    #expect(
      resolved.first?.text
        == "candidate:1088783236 1 udp 2113937151 198.19.74.2 43170 typ host generation 0")
  }
}
