/// What makes pressure rise; named in tier-change events.
public enum PressureSource: String, Sendable {
  /// The memory ledger against the budget.
  case ledger
  /// The process's resident memory against the budget.
  case resident
  /// The buffered duration of the ring against `--buffer`.
  case ringDuration
  /// The live bytes of the ring against its share of the budget.
  case ringBytes
  /// The sink's own congestion signal (e.g. SRT send-buffer fill).
  case sinkCongestion
}

/// Something the capture side noticed, queued for the status reporter (never written from the
/// capture thread, which does no I/O).
public enum PipelineEvent: Sendable, Equatable {
  /// The degradation tier changed.
  case tierChanged(from: Tier, to: Tier, pressure: Double, source: PressureSource)
  /// Video waits for a keyframe: the encoder should send one now.
  case keyframeRequested
  /// A track's clock was re-anchored (e.g. the mic clock after an interruption).
  case clockReset(kind: SampleKind, dts: Int64)
  /// A track's format changed mid-stream (the device rotated, the encoder was reconfigured).
  case formatChanged(kind: SampleKind, format: FormatDescription)
  /// The track's samples carry ADTS headers: they are removed (queued once per track and
  /// format; `PipelineSnapshot.adtsRemoved` counts the samples).
  case adtsHeadersRemoved(kind: SampleKind)
  /// A sample was refused for `error` (an ADTS header that contradicts the track's
  /// AudioSpecificConfig): queued once per track and format, the samples counted as `invalid`.
  case sampleRefused(kind: SampleKind, error: FormatError)
  /// A sample of `bytes` was refused as larger than `limit` (counted as `tooLarge`).
  case sampleTooLarge(kind: SampleKind, bytes: Int, limit: Int)
}
