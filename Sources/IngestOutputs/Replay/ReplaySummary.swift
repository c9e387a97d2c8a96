import IngestCore

/// The outcome of a replay, printed at the end and as `--json`.
public struct ReplaySummary: Sendable {
  /// The pipeline's counters at the end.
  public var snapshot: PipelineSnapshot
  /// Dump records skipped as invalid (recoverable reader errors).
  public var skippedRecords: Int
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

  /// Whether everything read was delivered or accounted for and nothing failed.
  public var succeeded: Bool { readError == nil && sinkError == nil }
}
