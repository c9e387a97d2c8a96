import IngestCore

/// The outcome of a replay, printed at the end and as `--json`.
public struct ReplaySummary: Sendable {
  /// The pipeline's counters at the end.
  public var snapshot: PipelineSnapshot
  /// Dump records skipped as invalid (recoverable reader errors).
  public var skippedRecords: Int
  /// Dump records refused by the reader (invalid content, intact framing: skipped, reading went
  /// on); samples among them never reached the pipeline, so they are not in its counters.
  public var invalidRecords: Int
  /// The error that stopped reading early, if any.
  public var readError: DumpError?
  /// The sink failure that stopped the run, if any.
  public var sinkError: SinkError?
  /// Wall time of the run on the pipeline clock, nanoseconds.
  public var elapsedNanoseconds: Int64
  /// Peak resident memory of the process from the kernel, when known.
  public var peakResidentBytes: Int?
  /// Tier changes during the run.
  public var tierChanges: Int
  /// The smallest share of the appended video frames (of all samples when there is no video)
  /// the output must have accepted for the run to succeed, 0...1.
  public var minimumDeliveredFraction: Double = ReplayOptions.defaultMinimumDeliveredFraction
  /// The signal (`SIGINT`, `SIGTERM`) that stopped the run before the end of the dump, if any:
  /// a requested stop, so the run still succeeds when its outputs were finished.
  public var stopSignal: String? = nil
  /// Members the input adds to the summary (a live encoder's exit and peak resident size).
  public var extraFields = JSONObject()
  /// Set by the input when it failed on its own (the encoder died): the run did not succeed.
  public var inputFailure: String? = nil

  /// Whether nothing failed and the output accepted at least `minimumDeliveredFraction` of what
  /// was appended: a run that dropped most of its stream did not deliver it, whatever it sent.
  public var succeeded: Bool {
    readError == nil && sinkError == nil && shortfall == nil && inputFailure == nil
  }

  /// Why the output did not take enough of the stream, as one line; `nil` when it did.
  public var shortfall: String? {
    let video = Int(SampleKind.video.rawValue)
    let hasVideo = snapshot.appended[video] > 0
    let appended = hasVideo ? snapshot.appended[video] : snapshot.totalAppended
    guard appended > 0 else { return nil }
    let sent = hasVideo ? snapshot.sent[video] : snapshot.totalSent
    let what = hasVideo ? "video frames" : "samples"
    if snapshot.sentBytes == 0 || sent == 0 {
      return "the output accepted nothing: 0 of \(appended) \(what) sent"
    }
    let fraction = Double(sent) / Double(appended)
    guard fraction < minimumDeliveredFraction else { return nil }
    let percent = { (value: Double) in JSONObject.fixed(value * 100, decimals: 0) }
    return "the output accepted only \(sent) of \(appended) \(what) (\(percent(fraction))%, "
      + "below the minimum of \(percent(minimumDeliveredFraction))%, --min-delivered)"
  }
}

extension ReplaySummary {
  /// Writes the summary's fields into a JSON object (the `summary` event and `--json`).
  public func fill(_ object: inout JSONObject) {
    let kinds = SampleKind.allCases
    var appended = JSONObject()
    var sent = JSONObject()
    for kind in kinds {
      appended.add(kind.description, snapshot.appended[Int(kind.rawValue)])
      sent.add(kind.description, snapshot.sent[Int(kind.rawValue)])
    }
    object.add("ok", succeeded)
    if let failure = inputFailure ?? shortfall { object.add("failure", failure) }
    object.add(
      "stopped",
      stopSignal ?? (readError == nil && sinkError == nil && inputFailure == nil ? "end" : "error"))
    object.add("elapsed_s", Double(elapsedNanoseconds) / 1e9)
    object.add("appended", appended)
    object.add("sent", sent)
    object.add("sent_bytes", snapshot.sentBytes)
    object.add("dropped", snapshot.drops.total)
    object.add("drops", StatusReporter.dropObject(snapshot.drops))
    object.add("undelivered", snapshot.inFlight)
    object.add("peak_ledger", snapshot.peakLedger)
    object.add("budget", snapshot.budget)
    if let peak = peakResidentBytes { object.add("peak_resident", peak) }
    object.add("tier_changes", tierChanges)
    object.add("final_tier", snapshot.tier.rawValue)
    object.add("clock_resets", snapshot.discontinuities)
    object.add("skipped_records", skippedRecords)
    object.add("invalid_records", invalidRecords)
    if let readError { object.add("read_error", readError.description) }
    if let sinkError { object.add("sink_error", sinkError.description) }
    object.merge(extraFields)
  }
}
