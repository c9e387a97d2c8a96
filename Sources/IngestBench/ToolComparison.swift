import IngestCore
import IngestPOSIX

#if canImport(Glibc)
  import Glibc
#endif

/// `ingest replay DUMP --to OUT.ts --speed max` against `ffmpeg -i SAME.mp4 -map 0 -c copy -f
/// mpegts OUT.ts` on the same content, whole processes, several alternating runs each.
///
/// The mp4 is made from the dump: replayed into a .ts by us, then remuxed by ffmpeg into mp4
/// (stream copy), so both programs write the same elementary streams.
public enum ToolComparison {
  /// One run of one program.
  public struct Measurement: Sendable {
    public var wallSeconds: Double
    public var cpuSeconds: Double
    public var peakResident: Int
  }

  /// Both programs' runs and medians.
  public struct Result: Sendable {
    public var contentSeconds = 0.0
    public var ingest: [Measurement] = []
    public var ffmpeg: [Measurement] = []
    /// Runs of each program doing nothing but start (`ingest --help`, `ffmpeg -version`): the
    /// share of the wall time that shared-library loading takes.
    public var ingestStart: [Measurement] = []
    public var ffmpegStart: [Measurement] = []
    public var ingestOutputBytes = 0
    public var ffmpegOutputBytes = 0

    public init() {}

    static func median(_ values: [Double]) -> Double {
      guard !values.isEmpty else { return 0 }
      let sorted = values.sorted()
      let middle = sorted.count / 2
      return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    public var ingestWall: Double { Self.median(ingest.map(\.wallSeconds)) }
    public var ingestCPU: Double { Self.median(ingest.map(\.cpuSeconds)) }
    public var ingestResident: Double { Self.median(ingest.map { Double($0.peakResident) }) }
    public var ffmpegWall: Double { Self.median(ffmpeg.map(\.wallSeconds)) }
    public var ffmpegCPU: Double { Self.median(ffmpeg.map(\.cpuSeconds)) }
    public var ffmpegResident: Double { Self.median(ffmpeg.map { Double($0.peakResident) }) }
    /// How many times faster (wall) and leaner ingest is: ffmpeg's median over ours.
    public var ingestStartWall: Double { Self.median(ingestStart.map(\.wallSeconds)) }
    public var ffmpegStartWall: Double { Self.median(ffmpegStart.map(\.wallSeconds)) }
    public var wallRatio: Double { ingestWall > 0 ? ffmpegWall / ingestWall : 0 }
    /// The wall ratio with each program's start-up time taken off.
    public var workRatio: Double {
      let ours = ingestWall - ingestStartWall
      return ours > 0 ? (ffmpegWall - ffmpegStartWall) / ours : 0
    }
    public var cpuRatio: Double { ingestCPU > 0 ? ffmpegCPU / ingestCPU : 0 }
    public var residentRatio: Double { ingestResident > 0 ? ffmpegResident / ingestResident : 0 }

    public var json: JSONObject {
      func runs(_ list: [Measurement]) -> [JSONObject] {
        list.map { run in
          var object = JSONObject()
          object.add("wall_s", run.wallSeconds, decimals: 4)
          object.add("cpu_s", run.cpuSeconds, decimals: 4)
          object.add("peak_rss", run.peakResident)
          return object
        }
      }
      var object = JSONObject()
      object.add("content_s", contentSeconds, decimals: 1)
      object.add("ingest_runs", runs(ingest))
      object.add("ffmpeg_runs", runs(ffmpeg))
      object.add("ingest_start_runs", runs(ingestStart))
      object.add("ffmpeg_start_runs", runs(ffmpegStart))
      object.add("ingest_output_bytes", ingestOutputBytes)
      object.add("ffmpeg_output_bytes", ffmpegOutputBytes)
      var medians = JSONObject()
      medians.add("ingest_wall_s", ingestWall, decimals: 4)
      medians.add("ingest_cpu_s", ingestCPU, decimals: 4)
      medians.add("ingest_peak_rss", Int(ingestResident))
      medians.add("ffmpeg_wall_s", ffmpegWall, decimals: 4)
      medians.add("ffmpeg_cpu_s", ffmpegCPU, decimals: 4)
      medians.add("ffmpeg_peak_rss", Int(ffmpegResident))
      medians.add("ingest_start_wall_s", ingestStartWall, decimals: 4)
      medians.add("ffmpeg_start_wall_s", ffmpegStartWall, decimals: 4)
      medians.add("wall_ratio", wallRatio, decimals: 2)
      medians.add("work_ratio", workRatio, decimals: 2)
      medians.add("cpu_ratio", cpuRatio, decimals: 2)
      medians.add("rss_ratio", residentRatio, decimals: 2)
      object.add("medians", medians)
      return object
    }
  }

  /// Why the comparison could not run.
  public enum Failure: Error, Sendable, CustomStringConvertible {
    case tool(String)
    case content(String)

    public var description: String {
      switch self {
      case .tool(let message), .content(let message): message
      }
    }
  }

  /// Runs the comparison.
  /// - Parameters:
  ///   - ingest: the `ingest` executable to measure.
  ///   - loops: passes of the dump in the compared content (1: the dump as it is).
  ///   - runs: measured runs of each program (after one unmeasured warm-up run each).
  public static func run(dumpPath: String, ingest: String, loops: Int, runs: Int) throws(Failure)
    -> Result
  {
    guard ChildProcess.resolve("ffmpeg") != nil else { throw .tool("ffmpeg is not on PATH") }
    let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
    var template = Array((base + "/ingest-bench-XXXXXX").utf8CString)
    guard let made = mkdtemp(&template) else {
      throw .content("cannot create a directory in \(base)")
    }
    let directory = String(cString: made)
    let content = directory + "/content.dump"
    let reference = directory + "/reference.ts"
    let mp4 = directory + "/content.mp4"
    let ours = directory + "/ingest.ts"
    let theirs = directory + "/ffmpeg.ts"
    defer {
      for file in [content, reference, mp4, ours, theirs] { unlink(file) }
      rmdir(directory)
    }
    // Neither program is measured with the allocation counter loaded.
    let environment = ChildProcess.environment(removing: ["LD_PRELOAD"])
    var result = Result()
    let dump: String
    do {
      let profile = try DumpProfile(path: dumpPath)
      result.contentSeconds = profile.seconds * Double(max(1, loops))
      if loops > 1 {
        try writeLooped(from: dumpPath, profile: profile, loops: loops, to: content)
        dump = content
      } else {
        dump = dumpPath
      }
    } catch {
      throw .content("\(error)")
    }
    func measure(_ program: String, _ arguments: [String]) throws(Failure) -> Measurement {
      let outcome: ChildProcess.Outcome
      do {
        outcome = try ChildProcess.run(
          program, arguments, stdout: .discard, stderr: .discard, environment: environment)
      } catch {
        throw .tool("\(error)")
      }
      guard outcome.status == 0 else {
        throw .tool("\(program) \(arguments.joined(separator: " ")) exited with \(outcome.status)")
      }
      return Measurement(
        wallSeconds: outcome.wallSeconds, cpuSeconds: outcome.cpuSeconds,
        peakResident: outcome.peakResident)
    }
    // `-y`: each run writes over the last one's output, which `ingest replay` otherwise refuses
    // (it never overwrites a file it was not told it may).
    let ingestArguments = ["replay", dump, "--to", ours, "--speed", "max", "--quiet", "-y"]
    let ffmpegArguments = [
      "-nostdin", "-v", "error", "-y", "-i", mp4, "-map", "0", "-c", "copy", "-f", "mpegts", theirs,
    ]
    _ = try measure(ingest, ["replay", dump, "--to", reference, "--speed", "max", "--quiet", "-y"])
    _ = try measure(
      "ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", reference, "-map", "0", "-c", "copy", mp4])
    _ = try measure(ingest, ingestArguments)
    _ = try measure("ffmpeg", ffmpegArguments)
    for _ in 0..<max(1, runs) {
      result.ingest.append(try measure(ingest, ingestArguments))
      result.ffmpeg.append(try measure("ffmpeg", ffmpegArguments))
      result.ingestStart.append(try measure(ingest, ["--help"]))
      result.ffmpegStart.append(try measure("ffmpeg", ["-hide_banner", "-version"]))
    }
    result.ingestOutputBytes = fileSize(ours)
    result.ffmpegOutputBytes = fileSize(theirs)
    return result
  }

  private static func fileSize(_ path: String) -> Int {
    var info = stat()
    return stat(path, &info) == 0 ? Int(info.st_size) : 0
  }

  /// Writes `loops` passes of the dump as one dump with rising timestamps.
  static func writeLooped(from path: String, profile: DumpProfile, loops: Int, to output: String)
    throws
  {
    var source = try LoopingDump(path: path, profile: profile)
    let file = try FileWriter(path: output)
    var writer = try DumpWriter(sink: file)
    for kind in SampleKind.allCases {
      if let format = profile.tracks.format(for: kind) { try writer.writeFormat(format, for: kind) }
    }
    let length = profile.loopPeriod * Int64(loops)
    while try source.next(), source.contentTime < length {
      let header = source.header
      guard profile.tracks.contains(header.kind) else { continue }
      let written = source.withPayload { payload in
        Swift.Result { () throws(DumpError) in
          try writer.writeSample(
            kind: header.kind, pts: header.pts, dts: header.dts, isKeyframe: header.isKeyframe,
            payload: payload)
        }
      }
      try written.get()
    }
    try writer.sink.close()
  }
}
