import IngestSRT
import Testing

@Suite struct SRTOptionsTests {
  let secret = "s3cret-Passphrase!"
  let stream = "#!::r=live/key123,m=publish"

  @Test func parsesEveryOption() throws {
    let options = try SRTOptions(
      parsing:
        "srt://ingest.example.net:9000?latency=200&passphrase=s3cret-Passphrase%21&pbkeylen=32"
        + "&streamid=#!::r=live/key123,m=publish&maxbw=5000000&mode=caller")
    #expect(options.host == "ingest.example.net")
    #expect(options.port == 9000)
    #expect(options.latencyMilliseconds == 200)
    #expect(options.passphrase == secret)
    #expect(options.keyLength == 32)
    #expect(options.streamID == stream)
    #expect(options.maxBandwidth == 5_000_000)
  }

  @Test func minimalURLKeepsLibraryDefaults() throws {
    let options = try SRTOptions(parsing: "srt://127.0.0.1:9000")
    #expect(options.host == "127.0.0.1")
    #expect(options.latencyMilliseconds == nil)
    #expect(options.effectiveLatencyMilliseconds == 120)
    #expect(options.passphrase == nil && options.streamID == nil && options.maxBandwidth == nil)
    #expect(options.redacted == "srt://127.0.0.1:9000")
  }

  @Test func acceptsTrailingSlashAndIPv6() throws {
    let options = try SRTOptions(parsing: "SRT://[::1]:4201/?latency=80")
    #expect(options.host == "::1")
    #expect(options.port == 4201)
    #expect(options.redacted == "srt://[::1]:4201?latency=80")
  }

  /// `latency=auto`: chosen from the round trip at connect; shown as given.
  @Test func acceptsAutomaticLatency() throws {
    let options = try SRTOptions(parsing: "srt://h:1?latency=auto")
    #expect(options.latencyIsAuto)
    #expect(options.latencyMilliseconds == nil)
    #expect(options.redacted == "srt://h:1?latency=auto")
    #expect(throws: SRTOptionsError.self) { try SRTOptions(parsing: "srt://h:1?latency=fast") }
  }

  @Test func percentDecodesValues() throws {
    let options = try SRTOptions(
      parsing: "srt://h:1?streamid=a%26b%3Dc%20d&passphrase=%41%62cdefghij")
    #expect(options.streamID == "a&b=c d")
    #expect(options.passphrase == "Abcdefghij")
  }

  @Test(
    arguments: [
      ("http://h:1", SRTOptionsError.notSRTScheme(found: "http")),
      ("h:1", .notSRTScheme(found: "")),
      ("srt://:9000", .missingHost),
      ("srt://", .missingHost),
      ("srt://host", .missingPort),
      ("srt://host:", .missingPort),
      ("srt://[::1", .unterminatedIPv6Host),
      ("srt://host:0", .invalidPort("0")),
      ("srt://host:70000", .invalidPort("70000")),
      ("srt://host:9x", .invalidPort("9x")),
      ("srt://host:9000/live", .unexpectedPath),
      ("srt://host:9000?mode=broadcast", .unsupportedMode("broadcast")),
      (
        "srt://host:9000?port=9001",
        .invalidValue(option: "port", reason: "is the local port of mode=rendezvous only")
      ),
      ("srt://host:9000?latncy=20", .unknownOption("latncy")),
      ("srt://host:9000?latency=20&latency=30", .duplicateOption("latency")),
      ("srt://host:9000?latency", .missingValue(option: "latency")),
      ("srt://host:9000?latency=", .missingValue(option: "latency")),
      (
        "srt://host:9000?latency=fast",
        .invalidValue(option: "latency", reason: "must be an integer")
      ),
      (
        "srt://host:9000?latency=-5",
        .invalidValue(option: "latency", reason: "must be 0...60000 milliseconds")
      ),
      (
        "srt://host:9000?pbkeylen=20&passphrase=0123456789",
        .invalidValue(option: "pbkeylen", reason: "must be 16, 24 or 32")
      ),
      (
        "srt://host:9000?pbkeylen=16",
        .invalidValue(option: "pbkeylen", reason: "needs a passphrase")
      ),
      (
        "srt://host:9000?maxbw=-2",
        .invalidValue(
          option: "maxbw",
          reason: "must be -1 (unlimited), 0 (relative to input) or bytes per second")
      ),
      ("srt://host:9000?streamid=ab%2", .invalidPercentEncoding(option: "streamid", offset: 2)),
      ("srt://host:9000?streamid=%zz", .invalidPercentEncoding(option: "streamid", offset: 0)),
      ("srt://host:9000?streamid=%ff", .invalidUTF8(option: "streamid")),
      (
        "srt://us er@host:9000",
        .invalidValue(option: "host", reason: "must be a plain host name or address literal")
      ),
    ])
  func rejects(url: String, expected: SRTOptionsError) {
    #expect(throws: expected) { try SRTOptions(parsing: url) }
  }

  @Test func modesParseAndShowInTheRedactedForm() throws {
    let listener = try SRTOptions(parsing: "srt://0.0.0.0:9000?mode=listener")
    #expect(listener.mode == .listener)
    #expect(listener.redacted == "srt://0.0.0.0:9000?mode=listener")
    let peer = try SRTOptions(parsing: "srt://203.0.113.7:9000?mode=Rendezvous&port=9001")
    #expect(peer.mode == .rendezvous)
    #expect(peer.localPort == 9001)
    #expect(peer.redacted == "srt://203.0.113.7:9000?mode=rendezvous&port=9001")
    #expect(try SRTOptions(parsing: "srt://h:1?mode=caller").mode == .caller)
  }

  @Test func unknownModeErrorNamesTheModes() {
    #expect {
      try SRTOptions(parsing: "srt://0.0.0.0:9000?mode=push")
    } throws: { error in
      "\(error)".contains("mode=listener") && "\(error)".contains("mode=rendezvous")
    }
  }

  @Test(arguments: ["short", String(repeating: "x", count: 80)])
  func passphraseLengthIsCheckedWithoutEchoingIt(passphrase: String) {
    #expect {
      try SRTOptions(parsing: "srt://h:1?passphrase=\(passphrase)")
    } throws: { error in
      let text = "\(error)"
      return text.contains("passphrase") && text.contains("10 to 79") && !text.contains(passphrase)
    }
  }

  @Test func boundaryPassphraseLengthsAreAccepted() throws {
    #expect(try SRTOptions(parsing: "srt://h:1?passphrase=0123456789").passphrase?.count == 10)
    let longest = String(repeating: "y", count: 79)
    #expect(try SRTOptions(parsing: "srt://h:1?passphrase=\(longest)").passphrase == longest)
  }

  @Test func streamIDErrorsDoNotEchoIt() {
    let long = String(repeating: "k", count: 513)
    #expect {
      try SRTOptions(parsing: "srt://h:1?streamid=\(long)")
    } throws: { error in
      !"\(error)".contains(long) && "\(error)".contains("streamid")
    }
  }

  @Test func bareQueryItemIsNotEchoed() {
    #expect(throws: SRTOptionsError.unknownOption("query item 2")) {
      try SRTOptions(parsing: "srt://h:1?latency=5&hunter2hunter2")
    }
  }

  @Test func redactionHidesPassphraseAndStreamID() throws {
    let options = try SRTOptions(
      parsing: "srt://h:9000?passphrase=\(secret)&streamid=key123&latency=300&pbkeylen=24")
    let texts = [options.redacted, "\(options)", String(reflecting: options)]
    for text in texts {
      #expect(!text.contains(secret))
      #expect(!text.contains("key123"))
    }
    #expect(options.redacted == "srt://h:9000?latency=300&passphrase=***&pbkeylen=24&streamid=***")
  }

  @Test func memberwiseInitValidates() {
    #expect(
      throws: SRTOptionsError.invalidValue(
        option: "passphrase", reason: "must be 10 to 79 bytes long")
    ) {
      try SRTOptions(host: "h", port: 1, passphrase: "tiny")
    }
    #expect(throws: SRTOptionsError.invalidPort("0")) { try SRTOptions(host: "h", port: 0) }
  }

  @Test func parsesTimeouts() throws {
    let options = try SRTOptions(parsing: "srt://h:1?conntimeo=1500&stall_timeout=2.5")
    #expect(options.connectTimeoutMilliseconds == 1500)
    #expect(options.stallTimeoutMilliseconds == 2500)
    #expect(options.redacted == "srt://h:1?conntimeo=1500&stall_timeout=2.500")
    let defaults = try SRTOptions(parsing: "srt://h:1")
    #expect(defaults.effectiveConnectTimeoutMilliseconds == 3000)
    #expect(defaults.effectiveStallTimeoutMilliseconds == 5000)
    #expect(throws: SRTOptionsError.self) { try SRTOptions(parsing: "srt://h:1?stall_timeout=0") }
    #expect(throws: SRTOptionsError.self) { try SRTOptions(parsing: "srt://h:1?conntimeo=5") }
  }
}
