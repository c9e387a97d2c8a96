import IngestCore

/// The outcome of a replay, printed at the end and as `--json`: what the run read, and what each
/// output took.
public struct ReplaySummary: Sendable {
  /// Each output's figures, in `--to` order (one for most runs).
  public var outputs: [OutputSummary]
  /// Dump records skipped as invalid (recoverable reader errors).
  public var skippedRecords: Int
  /// Dump records refused by the reader (invalid content, intact framing: skipped, reading went
  /// on); samples among them never reached the pipeline, so they are not in its counters.
  public var invalidRecords: Int
  /// Format records refused by the reader: tracks that went without samples, and why.
  public var refusedFormats: [RefusedFormat] = []
  /// The error that stopped reading early, if any.
  public var readError: DumpError?
  /// Wall time of the run on the pipeline clock.
  public var elapsed: TimeSpan
  /// Peak resident memory of the process from the kernel, when known.
  public var peakResidentBytes: Int?
  /// The signal (`SIGINT`, `SIGTERM`, `SIGHUP`, `SIGUSR1`) that stopped the run before the end
  /// of the dump, if any: a requested stop, so the run still succeeds when its outputs were
  /// finished. `SIGQUIT` stops without draining, and the run does not succeed.
  public var stopSignal: String? = nil
  /// Members the input adds to the summary (a live encoder's exit and peak resident size).
  public var extraFields = JSONObject()
  /// Set by the input when it failed on its own (the encoder died): the run did not succeed.
  public var inputFailure: String? = nil

  /// The first output's counters (the only output's, in a run with one).
  public var snapshot: PipelineSnapshot { outputs[0].snapshot }
  /// The first output failure, if any.
  public var sinkError: SinkError? { outputs.lazy.compactMap(\.sinkError).first }
  /// Bytes the first output accepted.
  public var sentBytes: Int64 { outputs[0].sentBytes }
  /// Tier changes of the first output.
  public var tierChanges: Int { outputs[0].tierChanges }

  /// Sets every output's minimum share of delivered video frames.
  public var minimumDeliveredFraction: Double {
    get { outputs[0].minimumDeliveredFraction }
    set { for index in outputs.indices { outputs[index].minimumDeliveredFraction = newValue } }
  }

  /// Whether nothing failed and every output accepted at least its minimum share: a run that
  /// dropped most of its stream did not deliver it, whatever it sent.
  public var succeeded: Bool {
    readError == nil && inputFailure == nil && stopSignal != StopSignal.immediateName
      && refusedFormats.isEmpty && outputs.allSatisfy(\.succeeded)
  }

  /// Why a refused format record fails the run, as one line (the first of them); nil when
  /// none was refused. The producer sent a track the outputs cannot carry (AAC-ELD, say): the
  /// outputs lack it, so the run did not deliver what it was given, whatever else it sent.
  public var refusedTrack: String? {
    guard let refused = refusedFormats.first else { return nil }
    return "the \(refused.kind) track was refused: \(refused.reason); its samples were dropped"
  }

  /// Why a SIGQUIT stop did not succeed, as one line; nil for any other end.
  public var immediateStop: String? {
    guard stopSignal == StopSignal.immediateName else { return nil }
    return "stopped by SIGQUIT: the outputs were closed without sending what they still held"
  }

  /// Why an output did not take enough of the stream, as one line; `nil` when all did. With
  /// several outputs the line names the output.
  public var shortfall: String? {
    outputs.lazy.compactMap { output in output.shortfall.map { label(output) + $0 } }.first
  }

  /// `output N (DESCRIPTION): ` in a run with several outputs, else nothing.
  public func label(_ output: OutputSummary) -> String {
    outputs.count > 1 ? "output \(output.index) (\(output.description)): " : ""
  }

  /// Peak of the run's ledger: every output's pipeline reports the shared one.
  public var peakLedger: Int { outputs.map(\.snapshot.peakLedger).max() ?? 0 }
}

extension ReplaySummary {
  /// Writes the summary's fields into a JSON object (the `summary` event and `--json`). A run
  /// with one output has its figures at the top level; with several, each output's are in
  /// `outputs`, labelled with its `output` number and `to`.
  public func fill(_ object: inout JSONObject) {
    var appended = JSONObject()
    for kind in SampleKind.allCases {
      appended.add(kind.description, snapshot.appended[Int(kind.rawValue)])
    }
    object.add("ok", succeeded)
    if let failure = inputFailure ?? immediateStop ?? refusedTrack ?? shortfall {
      object.add("failure", failure)
    }
    object.add(
      "stopped",
      stopSignal ?? (readError == nil && sinkError == nil && inputFailure == nil ? "end" : "error"))
    object.add("elapsed_s", elapsed.inSeconds)
    object.add("appended", appended)
    if outputs.count == 1 {
      outputs[0].fill(&object, readError: readError)
    } else {
      object.add(
        "outputs",
        outputs.map { output in
          var item = JSONObject()
          item.add("output", output.index)
          item.add("to", output.description)
          item.add("ok", output.succeeded)
          if let shortfall = output.shortfall { item.add("failure", shortfall) }
          output.fill(&item, readError: readError)
          return item
        })
    }
    object.add("peak_ledger", peakLedger)
    object.add("budget", snapshot.budget)
    if let peak = peakResidentBytes { object.add("peak_resident", peak) }
    object.add("clock_resets", snapshot.discontinuities)
    object.add("skipped_records", skippedRecords)
    object.add("invalid_records", invalidRecords)
    if !refusedFormats.isEmpty { object.add("refused_formats", refusedFormats.map(\.json)) }
    if let readError { object.add("read_error", readError.description) }
    object.merge(extraFields)
  }
}
