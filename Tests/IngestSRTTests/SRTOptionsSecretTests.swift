import Foundation
import IngestSRT
import Testing

/// `passphrase_file=`, `streamid_file=`, `INGEST_SRT_PASSPHRASE` and `INGEST_SRT_STREAMID`: the
/// secrets of an `srt://` URL kept off the command line, and errors that name the option and the
/// file without quoting what is in it.
@Suite struct SRTOptionsSecretTests {
  let passphrase = "file-Passphrase-8812"
  let streamID = "#!::r=live/sid-File-4471,m=publish"
  /// No variable set: the tests never depend on the environment they run in.
  let noVariables: [String: String] = [:]

  /// A fresh directory holding `name` with `contents`; the caller removes the directory.
  private func file(_ name: String, _ contents: [UInt8]) throws -> (directory: URL, path: String) {
    let directory = FileManager.default.temporaryDirectory.appending(
      path: "srt-secret-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let url = directory.appending(path: name)
    try Data(contents).write(to: url)
    return (directory, url.path)
  }

  private func file(_ name: String, _ text: String) throws -> (directory: URL, path: String) {
    try file(name, Array(text.utf8))
  }

  @Test(arguments: ["", "\n", "\r\n"])
  func secretsAreReadFromFilesWithoutOneLineEnd(lineEnd: String) throws {
    let pass = try file("pass", passphrase + lineEnd)
    defer { try? FileManager.default.removeItem(at: pass.directory) }
    let sid = try file("sid", streamID + lineEnd)
    defer { try? FileManager.default.removeItem(at: sid.directory) }
    let options = try SRTOptions(
      parsing: "srt://h:9000?passphrase_file=\(pass.path)&pbkeylen=32&streamid_file=\(sid.path)",
      environment: noVariables)
    #expect(options.passphrase == passphrase)
    #expect(options.streamID == streamID)
    #expect(options.keyLength == 32)
    #expect(options.redacted == "srt://h:9000?passphrase=***&pbkeylen=32&streamid=***")
    for text in [options.redacted, "\(options)", String(reflecting: options)] {
      #expect(!text.contains(passphrase))
      #expect(!text.contains("sid-File"))
    }
  }

  @Test func aFilePathIsPercentDecoded() throws {
    let pass = try file("my pass&1", passphrase)
    defer { try? FileManager.default.removeItem(at: pass.directory) }
    let encoded = pass.path.replacing(" ", with: "%20").replacing("&", with: "%26")
    let options = try SRTOptions(
      parsing: "srt://h:1?passphrase_file=\(encoded)", environment: noVariables)
    #expect(options.passphrase == passphrase)
  }

  @Test func anUnreadableFileIsNamedWithTheSystemsReason() throws {
    let missing = "/nonexistent-\(UUID().uuidString)/pass"
    let expected = SRTOptionsError.unreadableSecretFile(
      option: "passphrase_file", path: missing, reason: "No such file or directory")
    #expect(throws: expected) {
      try SRTOptions(parsing: "srt://h:1?passphrase_file=\(missing)", environment: noVariables)
    }
    #expect(
      "\(expected)"
        == "SRT option 'passphrase_file': cannot read '\(missing)': No such file or directory")
    let directory = FileManager.default.temporaryDirectory.path
    #expect(throws: SRTOptionsError.self) {
      try SRTOptions(parsing: "srt://h:1?streamid_file=\(directory)", environment: noVariables)
    }
  }

  @Test(arguments: ["", "\n", "\r\n"])
  func anEmptyFileIsRefusedByName(contents: String) throws {
    let empty = try file("empty", contents)
    defer { try? FileManager.default.removeItem(at: empty.directory) }
    let expected = SRTOptionsError.emptySecret(option: "streamid_file", path: empty.path)
    #expect(throws: expected) {
      try SRTOptions(parsing: "srt://h:1?streamid_file=\(empty.path)", environment: noVariables)
    }
    #expect("\(expected)" == "SRT option 'streamid_file': '\(empty.path)' is empty")
  }

  /// Both forms given is a mistake of the command line, found before the file is opened.
  @Test func aValueAndItsFileTogetherAreAUsageError() {
    #expect(throws: SRTOptionsError.conflictingOptions("passphrase", "passphrase_file")) {
      try SRTOptions(
        parsing: "srt://h:1?passphrase_file=/nonexistent&passphrase=\(passphrase)",
        environment: noVariables)
    }
    #expect(throws: SRTOptionsError.conflictingOptions("streamid", "streamid_file")) {
      try SRTOptions(
        parsing: "srt://h:1?streamid=abc&streamid_file=/nonexistent", environment: noVariables)
    }
    #expect(throws: SRTOptionsError.duplicateOption("passphrase_file")) {
      try SRTOptions(
        parsing: "srt://h:1?passphrase_file=/a&passphrase_file=/b", environment: noVariables)
    }
  }

  @Test(arguments: [
    "short-pw", String(repeating: "p", count: 80), String(repeating: "q", count: 5000),
  ])
  func aPassphraseFileOutsideSRTsLengthsIsRefusedWithoutQuotingIt(secret: String) throws {
    let pass = try file("pass", secret + "\n")
    defer { try? FileManager.default.removeItem(at: pass.directory) }
    let expected = SRTOptionsError.invalidSecret(
      option: "passphrase_file", path: pass.path, reason: "must be 10 to 79 bytes long")
    #expect(throws: expected) {
      try SRTOptions(parsing: "srt://h:1?passphrase_file=\(pass.path)", environment: noVariables)
    }
    #expect(!"\(expected)".contains(secret))
    #expect("\(expected)".contains("passphrase_file") && "\(expected)".contains(pass.path))
  }

  @Test func boundaryPassphraseLengthsFromAFileAreAccepted() throws {
    for secret in ["0123456789", String(repeating: "y", count: 79)] {
      let pass = try file("pass", secret + "\r\n")
      defer { try? FileManager.default.removeItem(at: pass.directory) }
      let options = try SRTOptions(
        parsing: "srt://h:1?passphrase_file=\(pass.path)", environment: noVariables)
      #expect(options.passphrase == secret)
    }
  }

  @Test func aSecondLineOrBytesThatAreNotUTF8AreRefused() throws {
    let twoLines = try file("two", passphrase + "\n\n")
    defer { try? FileManager.default.removeItem(at: twoLines.directory) }
    #expect(
      throws: SRTOptionsError.invalidSecret(
        option: "passphrase_file", path: twoLines.path, reason: "holds more than one line")
    ) {
      try SRTOptions(
        parsing: "srt://h:1?passphrase_file=\(twoLines.path)", environment: noVariables)
    }
    let latin1 = try file("latin1", Array("stream-".utf8) + [0xE9, 0x41])
    defer { try? FileManager.default.removeItem(at: latin1.directory) }
    #expect(
      throws: SRTOptionsError.invalidSecret(
        option: "streamid_file", path: latin1.path, reason: "is not valid UTF-8")
    ) {
      try SRTOptions(parsing: "srt://h:1?streamid_file=\(latin1.path)", environment: noVariables)
    }
  }

  /// A `%00` (or any control character) in a passphrase or stream id used to be taken; libsrt
  /// stops at a NUL, so the stream would be encrypted with a shorter passphrase than the one
  /// written. Refused by a typed error that never quotes the value.
  @Test(arguments: ["%00", "%09", "%1B", "%7F"])
  func aControlCharacterInTheURLIsRefusedWithoutQuotingIt(character: String) {
    let url = "srt://h:1?passphrase=Open-\(character)-Sesame-77"
    #expect(throws: SRTOptionsError.controlCharacter(option: "passphrase")) {
      try SRTOptions(parsing: url, environment: noVariables)
    }
    #expect(throws: SRTOptionsError.controlCharacter(option: "streamid")) {
      try SRTOptions(
        parsing: "srt://h:1?streamid=Open-\(character)-Sesame-77", environment: noVariables)
    }
    let message = SRTOptionsError.controlCharacter(option: "passphrase").description
    #expect(!message.contains("Sesame") && message.contains("'passphrase'"))
    // A space is part of a passphrase, not a control character.
    #expect(
      (try? SRTOptions(parsing: "srt://h:1?passphrase=Open%20Sesame-77", environment: noVariables))?
        .passphrase == "Open Sesame-77")
  }

  @Test func aControlCharacterInAFileOrVariableIsRefused() throws {
    let nul = try file("nul", Array("Open-".utf8) + [0] + Array("-Sesame-77".utf8))
    defer { try? FileManager.default.removeItem(at: nul.directory) }
    #expect(
      throws: SRTOptionsError.invalidSecret(
        option: "passphrase_file", path: nul.path, reason: "holds a control character")
    ) {
      try SRTOptions(parsing: "srt://h:1?passphrase_file=\(nul.path)", environment: noVariables)
    }
    #expect(
      throws: SRTOptionsError.invalidSecret(
        option: "INGEST_SRT_PASSPHRASE", path: nil, reason: "holds a control character")
    ) {
      try SRTOptions(
        parsing: "srt://h:1", environment: ["INGEST_SRT_PASSPHRASE": "Open-\t-Sesame-77"])
    }
  }

  @Test func theEnvironmentIsUsedWhenTheURLHasNoSecret() throws {
    let variables = ["INGEST_SRT_PASSPHRASE": passphrase, "INGEST_SRT_STREAMID": streamID]
    let options = try SRTOptions(parsing: "srt://h:1?pbkeylen=16", environment: variables)
    #expect(options.passphrase == passphrase)
    #expect(options.streamID == streamID)
    #expect(options.redacted == "srt://h:1?passphrase=***&pbkeylen=16&streamid=***")
    #expect(SRTOptions.passphraseVariable == "INGEST_SRT_PASSPHRASE")
    #expect(SRTOptions.streamIDVariable == "INGEST_SRT_STREAMID")
  }

  @Test func theURLWinsOverTheEnvironment() throws {
    let variables = ["INGEST_SRT_PASSPHRASE": "environment-pass", "INGEST_SRT_STREAMID": "env-sid"]
    let inURL = try SRTOptions(
      parsing: "srt://h:1?passphrase=url-passphrase&streamid=url-sid", environment: variables)
    #expect(inURL.passphrase == "url-passphrase")
    #expect(inURL.streamID == "url-sid")
    let pass = try file("pass", passphrase)
    defer { try? FileManager.default.removeItem(at: pass.directory) }
    let fromFile = try SRTOptions(
      parsing: "srt://h:1?passphrase_file=\(pass.path)", environment: variables)
    #expect(fromFile.passphrase == passphrase)
    #expect(fromFile.streamID == "env-sid")
  }

  @Test func aBadVariableIsNamedWithoutQuotingIt() {
    #expect(throws: SRTOptionsError.emptySecret(option: "INGEST_SRT_PASSPHRASE", path: nil)) {
      try SRTOptions(parsing: "srt://h:1", environment: ["INGEST_SRT_PASSPHRASE": ""])
    }
    let short = SRTOptionsError.invalidSecret(
      option: "INGEST_SRT_PASSPHRASE", path: nil, reason: "must be 10 to 79 bytes long")
    #expect(throws: short) {
      try SRTOptions(parsing: "srt://h:1", environment: ["INGEST_SRT_PASSPHRASE": "tiny-pw"])
    }
    #expect("\(short)" == "environment variable INGEST_SRT_PASSPHRASE must be 10 to 79 bytes long")
    let long = String(repeating: "s", count: 513)
    #expect {
      try SRTOptions(parsing: "srt://h:1", environment: ["INGEST_SRT_STREAMID": long])
    } throws: { error in
      let text = "\(error)"
      return text.contains("INGEST_SRT_STREAMID") && text.contains("1 to 512")
        && !text.contains(long)
    }
  }

  @Test func theUnknownOptionMessageListsTheFileOptions() {
    #expect {
      try SRTOptions(parsing: "srt://h:1?passphrasefile=/x", environment: noVariables)
    } throws: { error in
      "\(error)".contains("passphrase_file") && "\(error)".contains("streamid_file")
    }
  }
}
