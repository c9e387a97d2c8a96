import IngestBench
import IngestCLI
import IngestCore
import IngestPOSIX

#if canImport(Glibc)
  import Glibc
#endif

/// `ingest bench`: runs the benchmark scenarios, each in its own process, and reports memory,
/// drops, append cost, allocations, mux throughput and a comparison with ffmpeg.
enum BenchCommand: Command {
  static let name = "bench"
  static let summary = "benchmark scenarios: memory ceiling, append cost, mux speed, vs ffmpeg"
  static let help = """
    usage: ingest bench [DUMP] (--all | --scenario NAME[,NAME...]) [options]

    Plays DUMP (default Fixtures/screen.dump, looped where a scenario needs length) through the
    pipeline in named scenarios, each in its own process so that its peak resident memory
    (VmHWM) is its own, and reports per scenario: peak ledger against the budget, peak RSS,
    drops by track and reason, tier changes, time from the end of an outage to the first
    keyframe delivered, Pipeline.append cost (p50/p99/p99.9/max), heap allocations per sample
    over the second half of the run, and capture throughput.

    scenarios:
      steady      sink faster than the stream
      congested   link at half the stream's bit rate
      outage      link stalls 10 s, then recovers
      burst       keyframe-heavy input
      soak        the dump looped at maximum speed for a set time (flat memory)
      srt         realtime into an SRT listener (only with --srt)
      mux         the MPEG-TS and fragmented-MP4 writers alone, MB/s on one core

    options:
      --all                   every scenario (srt only with --srt), then the ffmpeg comparison
      --scenario LIST         comma-separated scenario names
      --short                 a few seconds per scenario; no ffmpeg comparison unless asked
      --json                  print the report as JSON instead of markdown tables
      --json-file PATH        also write the JSON report to PATH
      --svg-dir DIR           write DIR/SCENARIO.svg: ledger, RSS, ring fill and tier over time
      --srt URL               an SRT listener for the srt scenario (srt://HOST:PORT)
      --soak-seconds S        wall time of the soak (default 60, 3 with --short)
      --seconds S             length of every scenario run (content seconds on the virtual
                              clock, wall seconds on the real one)
      --ffmpeg-runs N         measured runs of each program in the comparison (default 5; 0 skips)
      --ffmpeg-loops N        passes of DUMP in the compared content (default 6)
      --alloc-counter PATH    a build of Scripts/bench-support/alloccount.c, preloaded into the
                              scenario processes to count heap allocations
      -h, --help              show this help

    exit status: 0 ok, 1 a scenario failed or a memory bound was crossed (ledger above the
    budget, or a process's peak RSS above 50 MB), 2 usage error. Speed targets are reported,
    never enforced.
    """

  static func run(_ argv: [String]) throws -> Int32 {
    let args = try Arguments(
      argv,
      valued: [
        "--scenario", "--json-file", "--svg-dir", "--srt", "--soak-seconds", "--seconds",
        "--ffmpeg-runs",
        "--ffmpeg-loops", "--alloc-counter",
      ],
      flags: ["--all", "--short", "--json", "--child"])
    guard args.positionals.count <= 1 else { throw UsageError("expected at most one DUMP path") }
    var settings = BenchSettings(dumpPath: args.positionals.first ?? "Fixtures/screen.dump")
    settings.short = args.has("--short")
    settings.srtURL = args["--srt"]
    if let text = args["--soak-seconds"] {
      guard let seconds = Double(text), seconds > 0, seconds <= 86_400 else {
        throw UsageError("--soak-seconds must be a positive number of seconds, got '\(text)'")
      }
      settings.soakSeconds = seconds
    }
    if let text = args["--seconds"] {
      guard let seconds = Double(text), seconds > 0, seconds <= 86_400 else {
        throw UsageError("--seconds must be a positive number of seconds, got '\(text)'")
      }
      settings.seconds = seconds
    }
    var scenarios: [BenchScenario] = []
    if args.has("--all") { scenarios = BenchScenario.all(withSRT: settings.srtURL != nil) }
    if let list = args["--scenario"] {
      for word in list.split(separator: ",") {
        guard let scenario = BenchScenario(rawValue: String(word)) else {
          throw UsageError(
            "unknown scenario '\(word)' (known: \(BenchScenario.allCases.map(\.rawValue).joined(separator: ", ")))"
          )
        }
        if !scenarios.contains(scenario) { scenarios.append(scenario) }
      }
    }
    guard !scenarios.isEmpty else { throw UsageError("give --all or --scenario NAME") }
    if scenarios.contains(.srt) && settings.srtURL == nil {
      throw UsageError("the srt scenario needs --srt URL")
    }
    guard SystemPath.withCString(settings.dumpPath, { access($0, R_OK) }) == 0 else {
      Console.error("ingest bench: cannot read \(SystemPath.display(settings.dumpPath))")
      return 1
    }
    if args.has("--child") {
      guard scenarios.count == 1 else { throw UsageError("--child runs exactly one scenario") }
      return runChild(scenarios[0], settings: settings)
    }
    let defaultRuns = args.has("--all") && !settings.short ? 5 : 0
    let runs = try args.int("--ffmpeg-runs", in: 0...1000) ?? defaultRuns
    let loops = try args.int("--ffmpeg-loops", in: 1...1000) ?? 6
    var report = runScenarios(
      scenarios, settings: settings, allocationCounter: args["--alloc-counter"])
    if runs > 0 {
      Console.error("bench: ffmpeg comparison (\(runs) runs each)")
      if let executable = Executable.current() {
        do {
          report.comparison = try ToolComparison.run(
            dumpPath: settings.dumpPath, ingest: executable, loops: loops, runs: runs)
        } catch {
          report.comparisonSkipped = error.description
        }
      } else {
        report.comparisonSkipped = "cannot find the running executable"
      }
    } else {
      report.comparisonSkipped = "not asked for (--ffmpeg-runs 0)"
    }
    if let directory = args["--svg-dir"] {
      for result in report.results where !result.trace.isEmpty {
        let chart = SVGChart(
          title: "\(result.scenario): memory, ring fill and tier over time",
          subtitle: result.setup, points: result.trace, budget: result.budget)
        let path = directory + "/" + result.scenario + ".svg"
        if !write(chart.rendered, to: path) { Console.error("ingest bench: cannot write \(path)") }
      }
    }
    let json = report.json.rendered + "\n"
    if let path = args["--json-file"], !write(json, to: path) {
      Console.error("ingest bench: cannot write \(path)")
    }
    Console.out(args.has("--json") ? json : report.markdown)
    for violation in report.memoryViolations {
      Console.error("bench: memory bound crossed: \(violation)")
    }
    for failure in report.failures {
      Console.error("bench: \(failure.scenario) failed: \(failure.reason)")
    }
    return report.memoryViolations.isEmpty && report.failures.isEmpty ? 0 : 1
  }

  /// Runs each scenario in a child process of this executable and collects its JSON line.
  private static func runScenarios(
    _ scenarios: [BenchScenario], settings: BenchSettings, allocationCounter: String?
  ) -> BenchReport {
    var report = BenchReport()
    report.allocationsCounted = allocationCounter != nil
    guard let executable = Executable.current() else {
      report.failures.append(("all", "cannot find the running executable"))
      return report
    }
    var environment: [String]?
    if let allocationCounter {
      environment =
        ChildProcess.environment(removing: ["LD_PRELOAD"]) + ["LD_PRELOAD=\(allocationCounter)"]
    }
    for scenario in scenarios {
      var arguments = ["bench", settings.dumpPath, "--scenario", scenario.rawValue, "--child"]
      if settings.short { arguments.append("--short") }
      if let url = settings.srtURL { arguments += ["--srt", url] }
      if let seconds = settings.soakSeconds { arguments += ["--soak-seconds", String(seconds)] }
      if let seconds = settings.seconds { arguments += ["--seconds", String(seconds)] }
      Console.error("bench: \(scenario.rawValue) ...")
      let outcome: ChildProcess.Outcome
      do {
        outcome = try ChildProcess.run(
          executable, arguments, stdout: .capture, stderr: .inherit, environment: environment)
      } catch {
        report.failures.append((scenario.rawValue, error.description))
        continue
      }
      let line = outcome.stdout.split(separator: "\n").last.map(String.init) ?? ""
      guard outcome.status == 0, let value = try? JSONValue(parsing: line) else {
        report.failures.append((scenario.rawValue, "process exited with status \(outcome.status)"))
        continue
      }
      if scenario == .mux {
        report.mux = MuxBenchmark.Result(json: value)
      } else if var result = BenchResult(json: value) {
        // The kernel's figure for the whole child, should the child not have read its own.
        if result.peakResident == nil { result.peakResident = outcome.peakResident }
        report.results.append(result)
      }
    }
    return report
  }

  /// Runs one scenario in this process and prints its JSON line.
  private static func runChild(_ scenario: BenchScenario, settings: BenchSettings) -> Int32 {
    do {
      if scenario == .mux {
        let result = try MuxBenchmark.run(
          dumpPath: settings.dumpPath, seconds: ScenarioPlan.muxSeconds(settings))
        Console.out(result.json.rendered + "\n")
      } else {
        let result = try ScenarioRunner.run(scenario, settings: settings)
        Console.out(result.json.rendered + "\n")
      }
      return 0
    } catch {
      Console.error("ingest bench \(scenario.rawValue): \(error)")
      return 1
    }
  }

  /// Writes `text` to a new file at `path`.
  private static func write(_ text: String, to path: String) -> Bool {
    guard let file = try? FileDescriptor.open(path, O_WRONLY | O_CREAT | O_TRUNC) else {
      return false
    }
    defer { file.close() }
    return (try? file.writeAll(text)) != nil
  }
}
