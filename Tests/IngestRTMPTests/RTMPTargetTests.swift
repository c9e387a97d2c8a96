import IngestCore
import Testing

@testable import IngestRTMP

@Suite struct RTMPTargetTests {
  @Test func parsesHostPortAppAndKey() throws {
    let target = try RTMPTarget(url: "rtmp://example.com:1936/live/abc-123")
    #expect(target.scheme == .rtmp)
    #expect(target.host == "example.com")
    #expect(target.port == 1936)
    #expect(target.app == "live")
    #expect(target.streamKey == "abc-123")
    #expect(target.redactedDescription == "rtmp://example.com:1936/live/***")
  }

  @Test func defaultPortsFollowTheScheme() throws {
    #expect(try RTMPTarget(url: "rtmp://h/a/k").port == 1935)
    #expect(try RTMPTarget(url: "RTMPS://h/a/k").port == 443)
    #expect(try RTMPTarget(url: "rtmps://h/a/k").scheme == .rtmps)
  }

  @Test func nestedAppKeepsAllButTheLastComponent() throws {
    let target = try RTMPTarget(url: "rtmp://h/app/instance/key?token=x")
    #expect(target.app == "app/instance")
    #expect(target.streamKey == "key?token=x")
    #expect(target.url == "rtmp://h:1935/app/instance/key?token=x")
  }

  @Test func ipv6HostIsBracketedInTheURL() throws {
    let target = try RTMPTarget(url: "rtmp://[::1]:1940/live/k")
    #expect(target.host == "::1")
    #expect(target.port == 1940)
    #expect(target.url == "rtmp://[::1]:1940/live/k")
  }

  @Test func credentialsAreKeptButNeverShown() throws {
    let target = try RTMPTarget(url: "rtmp://user:pw@h/live/secretkey")
    #expect(target.url == "rtmp://user:pw@h:1935/live/secretkey")
    #expect(target.redactedDescription == "rtmp://***@h:1935/live/***")
    for text in [
      "\(target)", String(reflecting: target), dumped(target), target.redactedDescription,
    ] {
      #expect(!text.contains("secretkey"))
      #expect(!text.contains("pw"))
    }
  }

  @Test(arguments: [
    ("http://h/live/k", RTMPTargetError.unsupportedScheme("http")),
    ("live/k", .unsupportedScheme("")),
    ("rtmp:///live/k", .missingHost),
    ("rtmp://h:0/live/k", .invalidPort("0")),
    ("rtmp://h:99999/live/k", .invalidPort("99999")),
    ("rtmp://h:x/live/k", .invalidPort("x")),
    ("rtmp://h", .missingApp),
    ("rtmp://h/", .missingApp),
    ("rtmp://h/live", .missingStreamKey),
    ("rtmp://h/live/", .missingStreamKey),
    ("rtmp://h//k", .missingStreamKey),
    ("rtmp://h/live/k ey", .invalidCharacter(offset: 15)),
  ])
  func rejectsBadURLs(url: String, expected: RTMPTargetError) {
    #expect(throws: expected) { try RTMPTarget(url: url) }
  }

  @Test func rejectsOverlongURLs() {
    let url = "rtmp://h/live/" + String(repeating: "k", count: RTMPTarget.maximumLength)
    #expect(throws: RTMPTargetError.tooLong(length: url.utf8.count, limit: 1024)) {
      try RTMPTarget(url: url)
    }
  }

  @Test func errorMessagesNeverQuoteTheKey() {
    for url in [
      "ftp://h/live/topsecret", "rtmp://h:bad/live/topsecret", "rtmp://h/live/top secret",
    ] {
      do {
        _ = try RTMPTarget(url: url)
        Issue.record("\(url) parsed")
      } catch {
        #expect(!error.description.contains("secret"))
      }
    }
  }

  @Test func widensOneAndTwoByteNALLengths() {
    let two: [UInt8] = [0, 2, 0x65, 0xAA, 0, 1, 0x06]
    var out: [UInt8] = []
    #expect(two.withUnsafeBytes { RTMPNALLengths.widen($0, lengthSize: 2, into: &out) })
    #expect(out == [0, 0, 0, 2, 0x65, 0xAA, 0, 0, 0, 1, 0x06])
    let one: [UInt8] = [3, 0x41, 1, 2, 0]
    #expect(one.withUnsafeBytes { RTMPNALLengths.widen($0, lengthSize: 1, into: &out) })
    #expect(out == [0, 0, 0, 3, 0x41, 1, 2, 0, 0, 0, 0])
  }

  @Test func refusesNALLengthsPastTheEnd() {
    var out: [UInt8] = []
    let past: [UInt8] = [0, 5, 0x65, 0xAA]
    #expect(!past.withUnsafeBytes { RTMPNALLengths.widen($0, lengthSize: 2, into: &out) })
    let cut: [UInt8] = [0, 1, 0x65, 0]
    #expect(!cut.withUnsafeBytes { RTMPNALLengths.widen($0, lengthSize: 2, into: &out) })
  }

  private func dumped(_ value: some Any) -> String {
    var text = ""
    dump(value, to: &text)
    return text
  }
}
