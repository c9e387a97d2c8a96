import Foundation
import Glibc
import Testing
import IngestTestSupport

/// The short benchmark: every scenario for a few seconds, each in its own process. Asserts the
/// memory bounds only (the ledger within the budget, the whole process's peak RSS within
/// 50 MB); speed figures are printed by `Scripts/bench`, never asserted.
@Suite struct BenchSmokeTests {
  static let residentCeiling = 50_000_000

  @Test func everyScenarioStaysWithinTheLedgerAndResidentCeilings() throws {
    var arguments = ["bench", CommandRunner.fixture("screen.dump"), "--all", "--short", "--json"]
    let listener = CommandRunner.has("srt-live-transmit") ? try? BenchSRTListener() : nil
    if let listener { arguments += ["--srt", "srt://127.0.0.1:\(listener.port)"] }
    defer { listener?.kill() }
    let result = try CommandRunner.ingest(arguments, timeout: 300)
    #expect(!result.timedOut)
    #expect(result.status == 0, "stderr: \(result.stderr)")
    let report = try #require(
      try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    let scenarios = try #require(report["scenarios"] as? [[String: Any]])
    let names = Set(scenarios.compactMap { $0["scenario"] as? String })
    var expected: Set = ["steady", "congested", "outage", "burst", "soak"]
    if listener != nil { expected.insert("srt") }
    #expect(names == expected)
    #expect((report["failures"] as? [Any])?.isEmpty == true)
    for scenario in scenarios {
      let name = scenario["scenario"] as? String ?? "?"
      let budget = try #require(scenario["budget"] as? Int)
      let peakLedger = try #require(scenario["peak_ledger"] as? Int)
      let peakResident = try #require(scenario["peak_resident"] as? Int, "\(name) has no VmHWM")
      #expect(budget == 50_000_000, "\(name)")
      #expect(peakLedger <= budget, "\(name): peak ledger \(peakLedger) above budget \(budget)")
      #expect(peakResident > 0, "\(name)")
      #expect(
        peakResident <= Self.residentCeiling,
        "\(name): peak RSS \(peakResident) above \(Self.residentCeiling)")
      #expect((scenario["samples"] as? Int ?? 0) > 0, "\(name) appended nothing")
      #expect(scenario["sink_error"] == nil, "\(name): \(scenario["sink_error"] ?? "")")
    }
    let mux = try #require(report["mux"] as? [String: Any])
    #expect((mux["output_bytes"] as? Int ?? 0) > 0)
    if let resident = mux["peak_resident"] as? Int { #expect(resident <= Self.residentCeiling) }
    // The congested link must have made the pipeline shed load rather than grow.
    let congested = try #require(scenarios.first { $0["scenario"] as? String == "congested" })
    #expect((congested["dropped"] as? Int ?? 0) > 0)
    #expect((congested["tier_changes"] as? Int ?? 0) > 0)
  }

  @Test func childJSONIsOneLineWithTheReportedFields() throws {
    let result = try CommandRunner.ingest(
      [
        "bench", CommandRunner.fixture("screen.dump"), "--scenario", "outage", "--child",
        "--short",
      ], timeout: 120)
    #expect(result.status == 0, "stderr: \(result.stderr)")
    let lines = result.stdout.split(separator: "\n")
    #expect(lines.count == 1)
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data((lines.first ?? "").utf8)) as? [String: Any])
    #expect(object["scenario"] as? String == "outage")
    // The outage ends within the run, so the first keyframe after it is measured.
    #expect(object["outage_to_keyframe_ms"] as? Double != nil)
    let append = try #require(object["append_ns"] as? [String: Any])
    let p50 = try #require(append["p50"] as? Int)
    let p99 = try #require(append["p99"] as? Int)
    let maximum = try #require(append["max"] as? Int)
    #expect(p50 <= p99 && p99 <= maximum)
    #expect(((object["trace"] as? [Any])?.count ?? 0) > 10)
  }

  @Test func unknownScenarioIsAUsageError() throws {
    let result = try CommandRunner.ingest(["bench", "--scenario", "nonsense"])
    #expect(result.status == 2)
    #expect(result.stderr.contains("unknown scenario"))
  }
}

/// An `srt-live-transmit` listener on a free loopback port (through `Scripts/servers
/// srt-listener`), discarding what it receives; killed by its pid.
final class BenchSRTListener {
  let port: UInt16
  private let process = Process()

  init() throws {
    port = UInt16(try LoopbackServers.freePort(SOCK_DGRAM))
    process.executableURL = CommandRunner.packageRoot.appending(path: "Scripts/servers")
    process.arguments = ["srt-listener", String(port), "/dev/null"]
    let errors = Pipe()
    process.standardError = errors
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    // Ready when it prints " listen..."; end of file first means it died.
    var seen = Data()
    let reader = errors.fileHandleForReading
    while !String(decoding: seen, as: UTF8.self).contains(" listen...") {
      let chunk = reader.availableData
      if chunk.isEmpty { throw CocoaError(.fileReadUnknown) }
      seen.append(chunk)
    }
    reader.readabilityHandler = { handle in
      if handle.availableData.isEmpty { handle.readabilityHandler = nil }
    }
  }

  func kill() {
    guard process.isRunning else { return }
    Glibc.kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
  }
}
