import Foundation
import Glibc
import IngestHLS
import IngestRTMP
import IngestSRT
import IngestSinks
import Testing

/// The inputs kept in `Fuzz/regressions/` (each once broke an invariant of a fuzz target),
/// replayed as ordinary tests of the same properties.
@Suite struct FuzzRegressionTests {
  static let regressions = TestServers.packageRoot.appending(path: "Fuzz/regressions")

  static func inputs(_ target: String) -> [URL] {
    let directory = regressions.appending(path: target)
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
    return names.sorted().map { directory.appending(path: $0) }
  }

  /// The values of `passphrase=` and `streamid=` query items of at least eight bytes.
  static func secrets(in text: String) -> [String] {
    guard let query = text.firstIndex(of: "?") else { return [] }
    var found: [String] = []
    for item in text[text.index(after: query)...].split(whereSeparator: { $0 == "&" || $0 == "?" })
    {
      for key in ["passphrase=", "streamid="] where item.hasPrefix(key) {
        let value = String(item.dropFirst(key.count))
        if value.utf8.count >= 8 { found.append(value) }
      }
    }
    return found
  }

  @Test func keptURLInputsAreRefusedWithoutQuotingSecrets() throws {
    let inputs = Self.inputs("OutputURL")
    #expect(inputs.count >= 4)
    for url in inputs {
      let text = String(decoding: try Data(contentsOf: url), as: UTF8.self)
      let secrets = Self.secrets(in: text)
      if secrets.isEmpty {
        // An RTMP URL whose secret is its stream key (the path after the application): it
        // parses, and every printed form ends in the key's mask, whatever the host spells.
        let target = try RTMPTarget(url: text)
        for printed in [target.description, target.debugDescription, String(reflecting: target)] {
          #expect(
            printed.hasSuffix("/***") || printed.hasSuffix("/***)"),
            "\(url.lastPathComponent): \(printed)")
        }
        continue
      }
      var messages: [String] = []
      do { _ = try OutputTarget(parsing: text) } catch {
        // A fixed sentence around the input's quoted text, whose list of outputs holds
        // ", whip+https://" itself: only the quoted text can carry a secret.
        messages.append(Self.quotedText(of: error))
      }
      do { _ = try SRTOptions(parsing: text) } catch { messages.append("\(error)") }
      do { _ = try RTMPTarget(url: text) } catch { messages.append("\(error)") }
      #expect(!messages.isEmpty)
      for message in messages {
        for secret in secrets {
          #expect(!message.contains(secret), "\(url.lastPathComponent): \(message)")
        }
      }
    }
  }

  /// The part of the input an `OutputURLError` quotes; any other error's whole message.
  static func quotedText(of error: any Error) -> String {
    switch error as? OutputURLError {
    case .unknownScheme(let text)?, .missingPath(let text)?, .badOption(let text)?,
      .unknownOption(let text)?, .unexpected(let text)?, .badContainer(let text)?,
      .badAudio(let text)?:
      text
    case nil: "\(error)"
    }
  }

  @Test func keptHLSJournalsRecoverOnceAndStayFinished() throws {
    let inputs = Self.inputs("HLSRecovery")
    #expect(!inputs.isEmpty)
    for input in inputs {
      let bytes = [UInt8](try Data(contentsOf: input))
      let journal = bytes.prefix { $0 != 0 }
      let directory = try TestServers.temporaryDirectory()
      defer { try? FileManager.default.removeItem(at: directory) }
      try Data(journal).write(to: directory.appending(path: "journal"))
      do {
        _ = try HLSRecovery.recover(directory: directory.path, now: 1_700_000_000_000)
      } catch {
        // Not one line of a journal: refused, with nothing written.
        guard case .notARecording = error else { throw error }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(names == ["journal"], "\(input.lastPathComponent): \(names)")
        continue
      }
      let again = try HLSRecovery.recover(directory: directory.path, now: 1_700_000_000_000)
      #expect(again.wasFinished || !again.lost.isEmpty, "\(input.lastPathComponent): \(again)")
      #expect(
        FileManager.default.fileExists(atPath: again.playlistPath), "\(input.lastPathComponent)")
      if input.lastPathComponent.hasPrefix("torn") {
        let text = try String(
          contentsOf: directory.appending(path: "journal"), encoding: .isoLatin1)
        #expect(text.hasSuffix("\nend\n"), "end glued to a torn line: \(text.debugDescription)")
      }
    }
  }
}
