import Foundation
import IngestTestSupport
import Testing

/// The terminal progress line of a replay into SRT, drawn because standard error is a terminal
/// (`script` gives the run a pseudo-terminal): with the dump's length known it shows percent and
/// speed factor, and with the link's figures the round trip and send buffer, and no redraw is
/// longer than 79 columns, so none wraps on an 80-column terminal.
@Suite struct SRTProgressLineTests {
  /// `word` quoted for `sh`.
  private static func quoted(_ word: String) -> String {
    "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
  }

  @Test func progressLineShowsRoundTripAndSendBufferWithinSeventyNineColumns() throws {
    try #require(CommandRunner.has("script"), "script (util-linux) gives the run a terminal")
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let port = try LoopbackServers.freePort(SOCK_DGRAM)
    let listener = try SRTListener(port: port, output: directory.appending(path: "received.ts"))
    defer { listener.kill() }
    let command = [
      CommandRunner.ingest, "replay", CommandRunner.fixture("screen.dump"), "--to",
      "srt://127.0.0.1:\(port)",
    ].map(Self.quoted).joined(separator: " ")
    // script copies what the terminal shows to its standard output.
    let result = try CommandRunner.run(
      "script", ["-q", "-e", "-c", command, "/dev/null"], timeout: 90)
    #expect(!result.timedOut)
    #expect(result.status == 0, "\(result.stdout)")
    // Each redraw starts with a carriage return and an erase-line; the summary comes after the
    // last (empty) one and has line breaks.
    let redraws = result.stdout.components(separatedBy: "\r\u{1B}[K").filter {
      !$0.isEmpty && !$0.contains("\n")
    }
    try #require(!redraws.isEmpty, "no progress line: \(result.stdout)")
    for line in redraws {
      #expect(line.count <= 79, "\(line.count) columns: \(line)")
    }
    let withLink = redraws.filter {
      $0.contains(#/ rtt [0-9.]+ms sndbuf [0-9]+ms /#)
    }
    try #require(!withLink.isEmpty, "no redraw shows rtt and sndbuf: \(redraws.suffix(3))")
    for line in withLink {
      #expect(line.contains(#/^[0-9.]+s [0-9]+% [0-9.]+x [0-9.]+Mb\/s /#), "\(line)")
    }
  }

  /// With two outputs the line shows the second one's tier and drops too: a simulated 300 kb/s
  /// link beside a file drops, and the line says so.
  @Test func progressLineShowsEveryOutput() throws {
    try #require(CommandRunner.has("script"), "script (util-linux) gives the run a terminal")
    let directory = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let command = [
      CommandRunner.ingest, "replay", CommandRunner.fixture("screen.dump"), "--to",
      directory.appending(path: "out.ts").path, "--to", "null:?rate=300k", "--speed", "2",
      "--min-delivered", "0",
    ].map(Self.quoted).joined(separator: " ")
    let result = try CommandRunner.run(
      "script", ["-q", "-e", "-c", command, "/dev/null"], timeout: 90)
    #expect(result.status == 0, "\(result.stdout)")
    let redraws = result.stdout.components(separatedBy: "\r\u{1B}[K").filter {
      !$0.isEmpty && !$0.contains("\n")
    }
    for line in redraws { #expect(line.count <= 79, "\(line.count) columns: \(line)") }
    let second = redraws.filter { $0.contains(#/ o2 T[0-4] d[0-9]+ /#) }
    try #require(!second.isEmpty, "no redraw shows output 2: \(redraws.suffix(3))")
    #expect(second.contains { !$0.contains(" d0 ") }, "output 2 never dropped: \(second.suffix(3))")
  }
}
