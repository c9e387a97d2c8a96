import IngestCore
import IngestPOSIX
import IngestSinks

/// Everything `ingest replay` (and the benchmark) can set for one run.
public struct ReplayOptions: Sendable {
  /// Where the stream goes.
  public var target: OutputTarget
  /// Pacing.
  public var speed: ReplaySpeed = .factor(1)
  /// Ring, budget and ladder settings.
  public var pipeline = PipelineConfiguration()
  /// Receives status events as JSON lines; nil for none.
  public var statusLine: (@Sendable (String) -> Void)?
  /// HLS: target segment duration in seconds (2 to 4).
  public var segmentSeconds = 2
  /// HLS: segments kept in the live playlist (0 keeps all, as an EVENT playlist).
  public var hlsWindow = 6
  /// RTMP: which audio track FLV carries (nil: app audio, or mic when there is none).
  public var rtmpAudio: SampleKind?
  /// Where resident memory is read (a test running in-process measures its own runner otherwise).
  public var residentProbe: any ResidentMemoryProbe = ProcResidentProbe()

  public init(target: OutputTarget) { self.target = target }
}
