import IngestCore
import IngestPOSIX
import IngestSinks
import IngestWHIP

#if canImport(Glibc)
  import Glibc
#endif

/// A run fed by a live encoder child (`ingest-encode`): the child's dump stream goes through the
/// same run as `replay` (every output, status, budget, ladder), the pipeline's encoder requests
/// go to the child's standard input, and the child's reports become `encoderReport` status
/// events. The child's exit and peak resident size are part of the summary, apart from the
/// pipeline's own memory.
public enum LiveSession {
  /// Starts the encoder on `source` with `encoderArguments` and runs until its stream ends (its
  /// `--duration`), the output fails or a stop signal arrives.
  public static func run(
    source: String, encoderArguments: [String], options: ReplayOptions, clock: SystemClock,
    onProgress: ((PipelineSnapshot, TimeSpan) -> Void)? = nil
  ) throws(ReplayError) -> ReplaySummary {
    var options = options
    options.isLive = true
    let executable = EncoderProcess.locate()
    let reports = ReportForwarder()
    var encoderArguments = encoderArguments
    if let profile = initialProfile(options.targets, encoderArguments: encoderArguments) {
      encoderArguments += ["--profile", profile.rawValue]
    }
    let process: EncoderProcess
    do {
      process = try EncoderProcess(
        executable: executable, arguments: [source] + encoderArguments,
        onLine: { reports.forward($0) })
    } catch {
      throw .encoder("cannot start \(executable): \(error)")
    }
    options.encoderRequests = { process.send($0) }
    let earlier = options.prepareReporter
    options.prepareReporter = { reporter in
      reports.attach(reporter)
      earlier?(reporter)
    }
    // A frame the encoder skipped for a lower frame rate was not delivered.
    options.skippedSourceVideoFrames = { reports.skippedFrames }
    options.summaryFields = {
      // The stream ended: the child is ending too, or must be told to (a failed output, a stop).
      // The run reads no more of it, however long the outputs took to finish meanwhile.
      process.stop()
      let exit = process.wait()
      var fields = JSONObject()
      var encoder = JSONObject()
      encoder.add("exit", exit.description)
      encoder.add("peak_resident", exit.peakResidentBytes)
      fields.add("encoder", encoder)
      let ended = exit.succeeded || exit.signal == SIGTERM
      return (fields, ended ? nil : "the encoder " + describe(exit, of: process))
    }
    do {
      return try ReplaySession.run(
        source: process.output, name: "encoder", options: options, clock: clock,
        senders: .threaded(clock), onProgress: onProgress)
    } catch {
      process.stop()
      let exit = process.wait()
      switch error {
      case .dump, .noTracks, .empty:
        // An encoder that died before its first sample explains the broken or empty stream.
        if !exit.succeeded { throw .encoder(describe(exit, of: process)) }
      default: break
      }
      throw error
    }
  }

  /// The H.264 profile the encoder starts in: the one the first WHIP output prefers, so that
  /// an answer choosing it needs no reopen (nil: libx264's own, without a WHIP output or with
  /// HEVC).
  static func initialProfile(_ targets: [OutputTarget], encoderArguments: [String])
    -> H264Profile?
  {
    if let codec = encoderArguments.firstIndex(of: "--codec"),
      encoderArguments.indices.contains(codec + 1), encoderArguments[codec + 1] != "h264"
    {
      return nil
    }
    for target in targets {
      if case .whip(let url) = target { return WHIPTarget.offeredProfiles(in: url).first }
    }
    return nil
  }

  /// How the child ended, with the last line it wrote to standard error.
  private static func describe(_ exit: EncoderProcess.Exit, of process: EncoderProcess) -> String {
    let last = process.lastLines.last { !$0.isEmpty } ?? ""
    return "\(exit)" + (last.isEmpty ? "" : ": \(last)")
  }
}

/// Hands the encoder's report lines to the status reporter once it exists; lines from before
/// (the `started` line) wait in a short queue.
private final class ReportForwarder: Sendable {
  private let state = HandOverLock<(reporter: StatusReporter?, early: [String])>((nil, []))

  /// The first reporter attached gets the reports (with several outputs, the first output's:
  /// the run's own events go there too).
  func attach(_ reporter: StatusReporter) {
    let early = state.withLock { state -> [String] in
      guard state.reporter == nil else { return [] }
      state.reporter = reporter
      defer { state.early = [] }
      return state.early
    }
    for line in early { emit(line, to: reporter) }
  }

  /// Source frames the encoder skipped when asked for a lower frame rate (its `dropped`).
  var skippedFrames: Int { skipped.withLock { $0 } }
  private let skipped = HandOverLock(0)

  func forward(_ line: String) {
    if let count = Self.droppedCount(line) { skipped.withLock { $0 = max($0, count) } }
    let reporter = state.withLock { state -> StatusReporter? in
      if state.reporter == nil && state.early.count < 64 { state.early.append(line) }
      return state.reporter
    }
    if let reporter { emit(line, to: reporter) }
  }

  /// The `dropped` member of a `stats` or `end` report (cumulative), if the line is one. The
  /// child's reports cross a process boundary as JSON lines: they are read as values here, the
  /// member taken only from an event that has it.
  private static func droppedCount(_ line: String) -> Int? {
    guard let report = try? JSONValue(parsing: line),
      let event = report["event"]?.string, event == "stats" || event == "end"
    else { return nil }
    return report["dropped"]?.int
  }

  private func emit(_ line: String, to reporter: StatusReporter) {
    reporter.emit("encoderReport") { $0.add("report", jsonObjectText: line) }
  }
}
