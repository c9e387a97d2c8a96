import Foundation
import IngestTestSupport
import Testing

/// `ingest replay DUMP --to srt://...` to a real libsrt listener (`SRTListener`:
/// srt-live-transmit on a free loopback port of its own) that writes what it receives to a
/// `.ts` file, which the test then reads back as it reads a recording.
enum SRTPush {
  /// The pace of a replay to a live receiver: `--speed max` hands libsrt a whole dump at once,
  /// more than a live receiver is made to take. Four times real time, with
  /// `SRTListener.toleratedLatency`, is what the SRT replay tests push at.
  static let speed = "4"

  /// A finished push: the replay's result and the copy the listener wrote.
  struct Push {
    var run: CommandRunner.Result
    var received: String
  }

  /// Starts a listener that writes to `name-srt.ts` in `directory`, replays `dump` to it and
  /// returns once the listener has written what it received (with `-a:no` it exits when its
  /// caller has gone).
  static func replay(
    _ dump: String, named name: String, in directory: URL, arguments: [String] = []
  ) throws -> Push {
    let listener = try SRTListener(
      port: try LoopbackServers.freePort(SOCK_DGRAM),
      output: directory.appending(path: "\(name)-srt.ts"))
    defer { listener.kill() }
    let run = try CommandRunner.ingest(
      [
        "replay", dump, "--to",
        "srt://127.0.0.1:\(listener.port)?latency=\(SRTListener.toleratedLatency)",
        "--speed", speed,
      ] + arguments)
    #expect(!run.timedOut, "\(name): the SRT replay did not end")
    #expect(
      listener.child.wait(timeout: 30), "\(name): the SRT listener did not end after its caller")
    return Push(run: run, received: listener.output.path)
  }
}
