import Foundation
import Glibc
import IngestHLS
import IngestTestSupport
import Testing

/// `ingest upload` of an HLS rendition set (`--audio both`): every rendition's files under
/// `URL/video/`, `URL/app/`, `URL/mic/`, the multivariant playlist at `URL/`, to a real nginx
/// WebDAV server; the server's copy plays in ffmpeg and playbin3 over HTTP.
@Suite(.serialized) struct UploadRenditionSetTests {
  static let renditions = ["video", "app", "mic"]

  static func record(_ directory: URL, speed: String) throws -> ChildProcess {
    try ChildProcess(
      CommandRunner.ingest,
      [
        "replay", CommandRunner.fixture("screen.dump"), "--to", "hls:\(directory.path)",
        "--audio", "both", "--speed", speed, "--quiet",
      ], directory: directory.deletingLastPathComponent(), name: "replay-\(speed)")
  }

  /// Every file of every rendition (segments and playlist) and the multivariant playlist.
  static func files(of recording: URL) throws -> [String] {
    var names = ["index.m3u8"]
    for rendition in renditions {
      let text = LoopbackServers.text(
        of: recording.appending(path: rendition).appending(path: HLSJournal.fileName))
      let journal = HLSJournal.parse(text)
      #expect(journal.isFinished, "\(rendition)")
      names += (journal.segments.map(\.name) + [try #require(journal.playlistName)]).map {
        "\(rendition)/\($0)"
      }
    }
    return names
  }

  /// The server holds the set byte for byte and nothing partial; ffmpeg reads the multivariant
  /// playlist over HTTP without an error.
  static func expectServerCopy(of recording: URL, on server: NginxWebDAV) throws {
    let names = try files(of: recording)
    #expect(names.count > 10)
    let remote = server.root.appending(path: "rec")
    let local = try UploadHarness.sha256(names.map { recording.appending(path: $0).path })
    let copied = try UploadHarness.sha256(names.map { remote.appending(path: $0).path })
    #expect(local.count == names.count && local == copied)
    #expect(server.temporaryFiles.isEmpty)
    let play = try CommandRunner.run(
      "ffmpeg", ["-nostdin", "-v", "error", "-i", server.url + "index.m3u8", "-f", "null", "-"])
    #expect(play.status == 0 && play.stderr.isEmpty, "ffmpeg: \(play.stderr)")
  }

  @Test func finishedSetGoesUpRenditionByRenditionThenItsMultivariantPlaylist() throws {
    let work = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let recording = work.appending(path: "rec")
    let replay = try Self.record(recording, speed: "max")
    #expect(replay.wait(timeout: 60))
    #expect(replay.process.terminationStatus == 0, "\(replay.stderr)")
    let server = try NginxWebDAV(directory: work.appending(path: "server"))

    let first = try UploadHarness.upload([recording.path, "--to", server.url, "--json"])
    #expect(first.status == 0, "\(first.stderr)")
    let summary = UploadHarness.summary(first.stdout)
    // Five 2 s segments per rendition.
    #expect(summary["uploaded"] as? Int == 15, "\(first.stdout)")
    #expect(summary["recording_finished"] as? Bool == true)
    // The multivariant playlist after every media playlist it names.
    let log = server.accessLog
    let multivariant = try #require(log.range(of: "PUT /rec/index.m3u8"))
    for rendition in Self.renditions {
      let media = try #require(log.range(of: "PUT /rec/\(rendition)/index.m3u8"), "\(rendition)")
      #expect(media.lowerBound < multivariant.lowerBound, "\(rendition)")
    }
    try Self.expectServerCopy(of: recording, on: server)

    let again = try UploadHarness.upload([recording.path, "--to", server.url, "--json"])
    #expect(again.status == 0, "\(again.stderr)")
    #expect(UploadHarness.summary(again.stdout)["already_on_server"] as? Int == 15)

    if let reason = Player.playbin3.unavailableReason {
      TestEnvironment.unavailable(reason)
      return
    }
    let verdict = try Player.playbin3.play(server.root.appending(path: "rec").path)
    #expect(verdict.ok, "\(verdict.line)")
  }

  @Test func liveSetIsFollowedToItsEnd() throws {
    let work = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let recording = work.appending(path: "rec")
    let server = try NginxWebDAV(directory: work.appending(path: "server"))
    let replay = try Self.record(recording, speed: "realtime")
    try LoopbackServers.waitUntil("the video rendition's journal") {
      FileManager.default.fileExists(atPath: recording.appending(path: "video/journal").path)
    }
    let upload = try UploadHarness.startUpload(
      [recording.path, "--to", server.url, "--follow", "--json"], logs: work, name: "upload")
    #expect(replay.wait(timeout: 60))
    #expect(upload.wait(timeout: 60))
    #expect(upload.process.terminationStatus == 0, "\(upload.stderr)")
    let summary = UploadHarness.summary(upload.stdout)
    #expect(summary["uploaded"] as? Int == 15, "\(upload.stdout)")
    #expect(summary["recording_finished"] as? Bool == true)
    try Self.expectServerCopy(of: recording, on: server)
    #expect(!server.accessLog.contains(".part"))
  }
}
