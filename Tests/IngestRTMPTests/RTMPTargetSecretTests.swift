import Foundation
import Testing

@testable import IngestRTMP

/// `key_file=` and `INGEST_RTMP_KEY`: the stream key kept off the command line, and errors that
/// name the option and the file without quoting what is in it.
@Suite struct RTMPTargetSecretTests {
  let key = "rtmpKey-File-6620"
  /// No variable set: the tests never depend on the environment they run in.
  let noVariables: [String: String] = [:]

  /// A fresh directory holding `name` with `contents`; the caller removes the directory.
  private func file(_ name: String, _ contents: [UInt8]) throws -> (directory: URL, path: String) {
    let directory = FileManager.default.temporaryDirectory.appending(
      path: "rtmp-secret-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let url = directory.appending(path: name)
    try Data(contents).write(to: url)
    return (directory, url.path)
  }

  private func file(_ name: String, _ text: String) throws -> (directory: URL, path: String) {
    try file(name, Array(text.utf8))
  }

  @Test(arguments: ["", "\n", "\r\n"])
  func theKeyIsReadFromTheFileAndThePathIsTheApplication(lineEnd: String) throws {
    let secret = try file("key", key + lineEnd)
    defer { try? FileManager.default.removeItem(at: secret.directory) }
    let target = try RTMPTarget(
      url: "rtmp://example.com:1936/live?key_file=\(secret.path)", environment: noVariables)
    #expect(target.app == "live")
    #expect(target.streamKey == key)
    #expect(target.url == "rtmp://example.com:1936/live/\(key)")
    #expect(target.redactedDescription == "rtmp://example.com:1936/live/***")
    for text in ["\(target)", String(reflecting: target), target.redactedDescription] {
      #expect(!text.contains(key))
    }
  }

  @Test func aNestedApplicationOrATrailingSlashOrAnEarlierQueryStayTheApplication() throws {
    let secret = try file("key", key)
    defer { try? FileManager.default.removeItem(at: secret.directory) }
    let nested = try RTMPTarget(
      url: "rtmps://h/app/instance/?key_file=\(secret.path)", environment: noVariables)
    #expect(nested.app == "app/instance")
    #expect(nested.url == "rtmps://h:443/app/instance/\(key)")
    // YouTube's backup ingest: the query belongs to the application.
    let backup = try RTMPTarget(
      url: "rtmp://b.example/live2?backup=1&key_file=\(secret.path)", environment: noVariables)
    #expect(backup.app == "live2?backup=1")
    #expect(backup.streamKey == key)
  }

  @Test func theKeyFilePathIsPercentDecodedAndMustBeGiven() throws {
    let secret = try file("my key&1", key)
    defer { try? FileManager.default.removeItem(at: secret.directory) }
    let encoded = secret.path.replacing(" ", with: "%20").replacing("&", with: "%26")
    let target = try RTMPTarget(url: "rtmp://h/live?key_file=\(encoded)", environment: noVariables)
    #expect(target.streamKey == key)
    #expect(
      throws: RTMPTargetError.invalidValue(
        option: "key_file", reason: "has no value (expected key_file=PATH)")
    ) {
      try RTMPTarget(url: "rtmp://h/live?key_file=", environment: noVariables)
    }
    #expect(
      throws: RTMPTargetError.invalidValue(
        option: "key_file", reason: "has bad percent-encoding at byte 4")
    ) {
      try RTMPTarget(url: "rtmp://h/live?key_file=/run%2", environment: noVariables)
    }
  }

  @Test func anUnreadableFileIsNamedWithTheSystemsReason() {
    let missing = "/nonexistent-\(UUID().uuidString)/key"
    let expected = RTMPTargetError.unreadableSecretFile(
      option: "key_file", path: missing, reason: "No such file or directory")
    #expect(throws: expected) {
      try RTMPTarget(url: "rtmp://h/live?key_file=\(missing)", environment: noVariables)
    }
    #expect(
      expected.description
        == "RTMP URL option 'key_file': cannot read '\(missing)': No such file or directory")
  }

  @Test(arguments: ["", "\n", "\r\n"])
  func anEmptyFileIsRefusedByName(contents: String) throws {
    let empty = try file("empty", contents)
    defer { try? FileManager.default.removeItem(at: empty.directory) }
    let expected = RTMPTargetError.emptySecret(option: "key_file", path: empty.path)
    #expect(throws: expected) {
      try RTMPTarget(url: "rtmp://h/live?key_file=\(empty.path)", environment: noVariables)
    }
    #expect(expected.description == "RTMP URL option 'key_file': '\(empty.path)' is empty")
  }

  @Test func aKeyWithASpaceASecondLineOrTooLongIsRefusedWithoutQuotingIt() throws {
    let cases: [(String, String)] = [
      ("two words key", "holds a space, a control character or a second line"),
      (key + "\n" + key, "holds a space, a control character or a second line"),
      (String(repeating: "k", count: 2000), "must be at most 1005 bytes long"),
    ]
    for (contents, reason) in cases {
      let secret = try file("key", contents)
      defer { try? FileManager.default.removeItem(at: secret.directory) }
      let expected = RTMPTargetError.invalidSecret(
        option: "key_file", path: secret.path, reason: reason)
      #expect(throws: expected) {
        // 19 bytes before the key, "rtmp://h:1935/live/", leave 1005 of the 1024.
        try RTMPTarget(url: "rtmp://h/live?key_file=\(secret.path)", environment: noVariables)
      }
      #expect(!expected.description.contains(contents))
    }
  }

  @Test func theEnvironmentIsUsedWhenTheURLHasNoKey() throws {
    let variables = ["INGEST_RTMP_KEY": key]
    for (url, app) in [
      ("rtmp://h/live", "live"), ("rtmp://h/live/", "live"),
      ("rtmp://h/app/instance/", "app/instance"),
    ] {
      let target = try RTMPTarget(url: url, environment: variables)
      #expect(target.app == app)
      #expect(target.streamKey == key)
      #expect(!"\(target)".contains(key))
    }
    #expect(RTMPTarget.keyVariable == "INGEST_RTMP_KEY")
  }

  @Test func theURLWinsOverTheEnvironment() throws {
    let variables = ["INGEST_RTMP_KEY": "environment-key"]
    let inURL = try RTMPTarget(url: "rtmp://h/live/url-key", environment: variables)
    #expect(inURL.streamKey == "url-key")
    let secret = try file("key", key)
    defer { try? FileManager.default.removeItem(at: secret.directory) }
    let fromFile = try RTMPTarget(
      url: "rtmp://h/live?key_file=\(secret.path)", environment: variables)
    #expect(fromFile.streamKey == key)
  }

  @Test func aBadOrMissingVariableIsNamedWithoutQuotingIt() {
    #expect(throws: RTMPTargetError.emptySecret(option: "INGEST_RTMP_KEY", path: nil)) {
      try RTMPTarget(url: "rtmp://h/live", environment: ["INGEST_RTMP_KEY": ""])
    }
    let spaced = RTMPTargetError.invalidSecret(
      option: "INGEST_RTMP_KEY", path: nil,
      reason: "holds a space, a control character or a second line")
    #expect(throws: spaced) {
      try RTMPTarget(url: "rtmp://h/live", environment: ["INGEST_RTMP_KEY": "my key"])
    }
    #expect(!spaced.description.contains("my key"))
    #expect(throws: RTMPTargetError.missingStreamKey) {
      try RTMPTarget(url: "rtmp://h/live", environment: noVariables)
    }
    #expect(RTMPTargetError.missingStreamKey.description.contains("key_file=PATH"))
    #expect(RTMPTargetError.missingStreamKey.description.contains("INGEST_RTMP_KEY"))
  }

  @Test func aKeyFileWithoutAnApplicationIsRefused() throws {
    #expect(throws: RTMPTargetError.missingApp) {
      try RTMPTarget(url: "rtmp://h?key_file=/run/secrets/key", environment: noVariables)
    }
    #expect(throws: RTMPTargetError.missingApp) {
      try RTMPTarget(url: "rtmp://h/?key_file=/run/secrets/key", environment: noVariables)
    }
    #expect(throws: RTMPTargetError.missingApp) {
      try RTMPTarget(url: "rtmp://u:p@h:1935?key_file=/run/secrets/key", environment: noVariables)
    }
    let target = try RTMPTarget(url: "rtmp://user:pa?ss@h/live/k", environment: noVariables)
    #expect(target.userInfo == "user:pa?ss")
    #expect(target.host == "h")
  }
}
