/// Settings of a pipeline run. Sizes are in bytes (MB in the CLI means 10^6 bytes).
public struct PipelineConfiguration: Sendable {
  /// Longest buffered DTS span of the send ring (2 to 5 s).
  public var bufferMilliseconds = 3000
  /// The memory ceiling.
  public var budgetBytes = 50_000_000
  /// Modelled memory of the OS and frameworks in a real extension.
  public var overheadBytes = 20_000_000
  /// Maximum units in the ring (5 s of 60 fps video and two audio tracks fit many times over).
  public var recordCapacity = 4096
  /// Largest accepted sample payload: by default the largest a dump record holds. A pipeline
  /// lowers it to what its ring holds (`Pipeline.maximumSampleBytes`); larger samples are
  /// refused as `tooLarge`.
  public var maximumSampleBytes = SampleSizeLimit.format
  /// Thresholds and hysteresis of the degradation ladder.
  public var ladder = DegradationLadder.Configuration()
  /// Timeline tuning (start offset, clock-jump threshold).
  public var timeline = Timeline.Configuration()

  public init() {}

  /// The buffer bound in 90 kHz ticks.
  public var bufferTicks: Int64 { Int64(bufferMilliseconds) * 90 }
}

extension PipelineConfiguration {
  /// This configuration with the timeline starting where `sink` asks
  /// (`OutputSink.timelineStart`: an HLS recording a run continues starts after it), or as it is.
  public func timed(for sink: any OutputSink) -> PipelineConfiguration {
    var timed = self
    if let start = sink.timelineStart { timed.timeline.startOffset = start }
    return timed
  }
}
