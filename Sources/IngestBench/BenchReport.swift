import IngestCore

/// Every figure of a benchmark run, as markdown tables (the report people read) and as JSON.
public struct BenchReport: Sendable {
  /// Pipeline scenarios, in the order run.
  public var results: [BenchResult] = []
  public var mux: MuxBenchmark.Result?
  public var comparison: ToolComparison.Result?
  /// Why the ffmpeg comparison did not run, when it did not.
  public var comparisonSkipped: String?
  /// Scenarios whose process failed, with the reason.
  public var failures: [(scenario: String, reason: String)] = []
  /// Whether heap allocations were counted (the counting library was preloaded).
  public var allocationsCounted = false
  /// The whole-process resident ceiling, bytes.
  public var residentCeiling = 50_000_000

  public init() {}

  /// Scenarios that broke a memory bound: the ledger above the budget or the process's peak
  /// resident memory above the ceiling.
  public var memoryViolations: [String] {
    var violations: [String] = []
    for result in results {
      if result.peakLedger > result.budget {
        violations.append(
          "\(result.scenario): peak ledger \(result.peakLedger) > budget \(result.budget)")
      }
      if let resident = result.peakResident, resident > residentCeiling {
        violations.append("\(result.scenario): peak RSS \(resident) > \(residentCeiling)")
      }
    }
    if let mux, let resident = mux.peakResident, resident > residentCeiling {
      violations.append("mux: peak RSS \(resident) > \(residentCeiling)")
    }
    return violations
  }

  static func mb(_ bytes: Int) -> String { JSONObject.fixed(Double(bytes) / 1e6, decimals: 1) }
  static func us(_ nanoseconds: Int64) -> String {
    JSONObject.fixed(Double(nanoseconds) / 1e3, decimals: nanoseconds < 10_000 ? 2 : 1)
  }
  static func fixed(_ value: Double, _ decimals: Int) -> String {
    JSONObject.fixed(value, decimals: decimals)
  }

  /// One-line reading of each target.
  public var targets: [(target: String, figure: String, met: Bool?)] {
    var rows: [(String, String, Bool?)] = []
    if let worst = results.max(by: { $0.appendP99 < $1.appendP99 }) {
      rows.append(
        (
          "append p99 <= 50 us per sample",
          "worst p99 \(Self.us(worst.appendP99)) us (\(worst.scenario))",
          worst.appendP99 <= 50_000
        ))
    }
    let steadyStates = results.filter { $0.scenario == "steady" || $0.scenario == "soak" }
    if allocationsCounted, !steadyStates.isEmpty {
      let figures = steadyStates.map {
        "\($0.scenario) \(Self.fixed($0.allocationsPerSample ?? -1, 4))"
      }
      rows.append(
        (
          "zero heap allocations per sample in steady state", figures.joined(separator: ", "),
          steadyStates.allSatisfy { ($0.allocationsPerSample ?? 1) == 0 }
        ))
    } else {
      rows.append(("zero heap allocations per sample in steady state", "not counted", nil))
    }
    if let mux {
      rows.append(
        (
          "muxing >= 1 GB/s on one core",
          "\(Self.fixed(mux.outputMegabytesPerSecond, 0)) MB/s of TS out (\(Self.fixed(mux.inputMegabytesPerSecond, 0)) MB/s in)",
          mux.outputMegabytesPerSecond >= 1000
        ))
    }
    if let comparison {
      rows.append(
        (
          "replay --speed max >= 2x as fast as ffmpeg -c copy -f mpegts (whole process)",
          "\(Self.fixed(comparison.wallRatio, 2))x wall, \(Self.fixed(comparison.cpuRatio, 2))x CPU (\(Self.fixed(comparison.workRatio, 2))x without start-up)",
          comparison.wallRatio >= 2
        ))
    } else {
      rows.append(
        (
          "replay --speed max >= 2x as fast as ffmpeg",
          "not run: \(comparisonSkipped ?? "skipped")", nil
        ))
    }
    let residents = results.compactMap { result in result.peakResident.map { (result.scenario, $0) }
    }
    if let worst = residents.max(by: { $0.1 < $1.1 }) {
      let withSRT = results.contains { $0.scenario == "srt" } ? "" : " (SRT not run)"
      rows.append(
        (
          "peak RSS of the whole process <= 50 MB in every scenario",
          "worst \(Self.mb(worst.1)) MB (\(worst.0))\(withSRT)", worst.1 <= residentCeiling
        ))
    }
    if let worst = results.max(by: { $0.peakLedger - $0.budget < $1.peakLedger - $1.budget }) {
      rows.append(
        (
          "ledger never above the budget",
          "highest peak \(Self.mb(worst.peakLedger)) of \(Self.mb(worst.budget)) MB (\(worst.scenario))",
          results.allSatisfy { $0.peakLedger <= $0.budget }
        ))
    }
    return rows
  }

  /// The report as markdown tables.
  public var markdown: String {
    var lines: [String] = []
    lines.append("### Scenarios")
    lines.append("")
    lines.append(
      "| scenario | content / wall (s) | samples | peak ledger / budget (MB) | peak RSS, VmHWM (MB) | drops | tier changes (max tier) | outage end to keyframe (ms) | append p50 / p99 / p99.9 / max (us) | allocs per sample | capture MB/s |"
    )
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results {
      let outage = r.outageToKeyframeMilliseconds.map { Self.fixed($0, 1) } ?? "-"
      let allocations = r.allocationsPerSample.map { Self.fixed($0, 4) } ?? "-"
      let resident = r.peakResident.map(Self.mb) ?? "-"
      lines.append(
        "| \(r.scenario) | \(Self.fixed(r.contentSeconds, 1)) / \(Self.fixed(r.wallSeconds, 2)) | \(r.samples) | \(Self.mb(r.peakLedger)) / \(Self.mb(r.budget)) | \(resident) | \(r.droppedTotal) | \(r.tierChanges) (T\(r.maxTier)) | \(outage) | \(Self.us(r.appendP50)) / \(Self.us(r.appendP99)) / \(Self.us(r.appendP999)) / \(Self.us(r.appendMax)) | \(allocations) | \(Self.fixed(r.captureMegabytesPerSecond, 0)) |"
      )
    }
    for failure in failures {
      lines.append("| \(failure.scenario) | failed: \(failure.reason) | | | | | | | | | |")
    }
    lines.append("")
    lines.append("Setups:")
    lines.append("")
    for r in results {
      let link =
        r.linkBitsPerSecond.map { "link \(Self.fixed(Double($0) / 1e6, 2)) Mb/s" }
        ?? "link unlimited"
      var line =
        "- `\(r.scenario)`: \(r.setup); stream \(Self.fixed(Double(r.streamBitsPerSecond) / 1e6, 2)) Mb/s, \(link), \(r.clock) clock; ledger = \(Self.mb(r.overhead)) MB modelled overhead + \(Self.mb(r.fixedBytes)) MB fixed buffers + ring"
      if let perUnit = r.allocationsPerSentUnit {
        line += "; sender allocs per unit \(Self.fixed(perUnit, 4))"
      }
      if let error = r.sinkError { line += "; sink error: \(error)" }
      lines.append(line)
    }
    let dropped = results.filter { !$0.drops.isEmpty }
    if !dropped.isEmpty {
      lines.append("")
      lines.append("### Drops by track and reason")
      lines.append("")
      lines.append("| scenario | track | reason | count |")
      lines.append("|---|---|---|---|")
      for r in dropped {
        for drop in r.drops {
          lines.append("| \(r.scenario) | \(drop.track) | \(drop.reason) | \(drop.count) |")
        }
      }
    }
    if let mux {
      lines.append("")
      lines.append("### MPEG-TS writer (one core)")
      lines.append("")
      lines.append(
        "| passes | units | input MB/s | TS output MB/s | allocs per unit | peak RSS (MB) |")
      lines.append("|---|---|---|---|---|---|")
      lines.append(
        "| \(mux.passes) | \(mux.units) | \(Self.fixed(mux.inputMegabytesPerSecond, 0)) | \(Self.fixed(mux.outputMegabytesPerSecond, 0)) | \(mux.allocationsPerUnit.map { Self.fixed($0, 4) } ?? "-") | \(mux.peakResident.map(Self.mb) ?? "-") |"
      )
      lines.append("")
      lines.append("### Writers side by side (one core, same units)")
      lines.append("")
      lines.append("| writer | units | input MB/s | output MB/s | allocs per unit |")
      lines.append("|---|---|---|---|---|")
      lines.append(
        "| MPEG-TS (`TSPacketizer`) | \(mux.units) | \(Self.fixed(mux.inputMegabytesPerSecond, 0)) | \(Self.fixed(mux.outputMegabytesPerSecond, 0)) | \(mux.allocationsPerUnit.map { Self.fixed($0, 4) } ?? "-") |"
      )
      lines.append(
        "| fragmented MP4 (`MP4Fragmenter`) | \(mux.mp4Units) | \(Self.fixed(mux.mp4InputMegabytesPerSecond, 0)) | \(Self.fixed(mux.mp4OutputMegabytesPerSecond, 0)) | \(mux.mp4AllocationsPerUnit.map { Self.fixed($0, 4) } ?? "-") |"
      )
    }
    lines.append("")
    lines.append("### Against ffmpeg (whole process, medians)")
    lines.append("")
    if let c = comparison {
      lines.append(
        "\(Self.fixed(c.contentSeconds, 0)) s of content, \(c.ingest.count) runs each after a warm-up run; output \(Self.mb(c.ingestOutputBytes)) MB (ingest) and \(Self.mb(c.ffmpegOutputBytes)) MB (ffmpeg)."
      )
      lines.append("")
      lines.append("| command | wall (s) | CPU (s) | peak RSS (MB) |")
      lines.append("|---|---|---|---|")
      lines.append(
        "| `ingest replay DUMP --to OUT.ts --speed max` | \(Self.fixed(c.ingestWall, 3)) | \(Self.fixed(c.ingestCPU, 3)) | \(Self.mb(Int(c.ingestResident))) |"
      )
      lines.append(
        "| `ffmpeg -i SAME.mp4 -map 0 -c copy -f mpegts OUT.ts` | \(Self.fixed(c.ffmpegWall, 3)) | \(Self.fixed(c.ffmpegCPU, 3)) | \(Self.mb(Int(c.ffmpegResident))) |"
      )
      lines.append(
        "| ratio ffmpeg / ingest | \(Self.fixed(c.wallRatio, 2))x | \(Self.fixed(c.cpuRatio, 2))x | \(Self.fixed(c.residentRatio, 2))x |"
      )
      lines.append(
        "| start-up only (`ingest --help`, `ffmpeg -version`) | \(Self.fixed(c.ingestStartWall, 3)) / \(Self.fixed(c.ffmpegStartWall, 3)) | | |"
      )
      lines.append(
        "| ratio without start-up (wall) | \(Self.fixed(c.workRatio, 2))x | | |")
    } else {
      lines.append("Not run: \(comparisonSkipped ?? "skipped").")
    }
    lines.append("")
    lines.append("### Targets")
    lines.append("")
    lines.append("| target | figure | met |")
    lines.append("|---|---|---|")
    for row in targets {
      lines.append(
        "| \(row.target) | \(row.figure) | \(row.met.map { $0 ? "yes" : "no" } ?? "-") |")
    }
    return lines.joined(separator: "\n") + "\n"
  }

  /// The report as JSON.
  public var json: JSONObject {
    var object = JSONObject()
    object.add("scenarios", results.map(\.json))
    if let mux { object.add("mux", mux.json) } else { object.addNull("mux") }
    if let comparison {
      object.add("ffmpeg", comparison.json)
    } else {
      object.addNull("ffmpeg")
      if let comparisonSkipped { object.add("ffmpeg_skipped", comparisonSkipped) }
    }
    object.add(
      "failures",
      failures.map { failure in
        var item = JSONObject()
        item.add("scenario", failure.scenario)
        item.add("reason", failure.reason)
        return item
      })
    object.add("allocations_counted", allocationsCounted)
    object.add("resident_ceiling", residentCeiling)
    object.add(
      "targets",
      targets.map { row in
        var item = JSONObject()
        item.add("target", row.target)
        item.add("figure", row.figure)
        if let met = row.met { item.add("met", met) } else { item.addNull("met") }
        return item
      })
    object.add(
      "memory_violations",
      memoryViolations.map { text in
        var item = JSONObject()
        item.add("violation", text)
        return item
      })
    return object
  }
}
