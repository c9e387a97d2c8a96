import Foundation
import Testing

@testable import IngestWHIP

/// `--to whip+http(s)://…`: the endpoint ingest-whip POSTs to, the token's sources, and what
/// may be printed.
@Suite struct WHIPTargetTests {
  @Test func httpAndHTTPSBecomeTheEndpointWithoutWhipPlus() throws {
    let plain = try WHIPTarget(parsing: "whip+http://127.0.0.1:8889/whip/live", environment: [:])
    #expect(plain.endpoint == "http://127.0.0.1:8889/whip/live")
    #expect(plain.token == nil)
    let tls = try WHIPTarget(
      parsing: "WHIP+HTTPS://ingest.example.net/rtc/v1/whip", environment: [:])
    #expect(tls.endpoint == "HTTPS://ingest.example.net/rtc/v1/whip")
  }

  @Test func theEndpointKeepsItsOwnQueryButNotTheTokenFile() throws {
    let file = FileManager.default.temporaryDirectory.appending(path: "whip-token-\(UUID())")
    try "T0k3n.value\n".write(to: file, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(at: file) }
    let target = try WHIPTarget(
      parsing: "whip+http://h:1/whip/s?app=live&token-file=\(file.path)&x=1", environment: [:])
    #expect(target.endpoint == "http://h:1/whip/s?app=live&x=1")
    #expect(target.token == "T0k3n.value")
  }

  @Test func theTokenComesFromTheEnvironmentWhenTheURLNamesNoFile() throws {
    let target = try WHIPTarget(
      parsing: "whip+http://h/whip/s", environment: [WHIPTarget.tokenVariable: "abc.def"])
    #expect(target.token == "abc.def")
    #expect(throws: WHIPTargetError.emptyVariable) {
      try WHIPTarget(parsing: "whip+http://h/whip/s", environment: [WHIPTarget.tokenVariable: ""])
    }
  }

  @Test func aTokenOnTheCommandLineIsRefused() {
    #expect(throws: WHIPTargetError.tokenInURL) {
      try WHIPTarget(parsing: "whip+http://h/whip/s?token=secret", environment: [:])
    }
    #expect(throws: WHIPTargetError.credentialsInURL) {
      try WHIPTarget(parsing: "whip+http://user:secret@h/whip/s", environment: [:])
    }
  }

  @Test func aMissingTokenFileIsNamedButNeverQuoted() {
    do {
      _ = try WHIPTarget(parsing: "whip+http://h/w?token-file=/nonexistent/tok", environment: [:])
      Issue.record("no error")
    } catch {
      #expect(error.description.contains("'/nonexistent/tok'"))
    }
  }

  @Test func aTokenWithSpacesOrControlCharactersIsRefused() {
    #expect(throws: WHIPTargetError.self) {
      try WHIPTarget(
        parsing: "whip+http://h/w", environment: [WHIPTarget.tokenVariable: "two words"])
    }
  }

  @Test func theRedactedURLHidesTheLastPathElement() throws {
    let target = try WHIPTarget(
      parsing: "whip+https://live.example.com:443/whip/endpoint/SECRETKEY?x=1", environment: [:])
    #expect(target.redacted == "whip+https://live.example.com:443/whip/endpoint/***")
    #expect(!target.redacted.contains("SECRETKEY"))
    let root = try WHIPTarget(parsing: "whip+http://h:9", environment: [:])
    #expect(root.redacted == "whip+http://h:9")
  }

  @Test func otherSchemesAndAMissingHostAreRefused() {
    #expect(throws: WHIPTargetError.scheme) {
      try WHIPTarget(parsing: "whip://h/w", environment: [:])
    }
    #expect(throws: WHIPTargetError.missingHost) {
      try WHIPTarget(parsing: "whip+http:///w", environment: [:])
    }
  }

  /// `?profiles=` orders the H.264 profiles a live run offers; it never reaches the endpoint,
  /// and an unknown or repeated name is a typed error naming it.
  @Test func theProfilesOptionIsReadAndNotForwarded() throws {
    let target = try WHIPTarget(
      parsing: "whip+http://h/whip/s?profiles=baseline,high&app=1", environment: [:])
    #expect(target.profiles == [.constrainedBaseline, .high])
    #expect(target.endpoint == "http://h/whip/s?app=1")
    #expect(try WHIPTarget(parsing: "whip+http://h/whip/s", environment: [:]).profiles == nil)
    #expect(throws: WHIPTargetError.unknownProfile("high10")) {
      try WHIPTarget(parsing: "whip+http://h/whip/s?profiles=main,high10", environment: [:])
    }
    #expect(throws: WHIPTargetError.unknownProfile("")) {
      try WHIPTarget(parsing: "whip+http://h/whip/s?profiles=", environment: [:])
    }
    #expect(throws: WHIPTargetError.repeatedProfile("main")) {
      try WHIPTarget(parsing: "whip+http://h/whip/s?profiles=main,main", environment: [:])
    }
    #expect(
      WHIPTargetError.unknownProfile("high10").description
        == "WHIP URL option 'profiles': unknown H.264 profile 'high10' (known: baseline, main, high)"
    )
  }
}
