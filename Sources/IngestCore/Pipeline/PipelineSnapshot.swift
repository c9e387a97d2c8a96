/// A consistent copy of the pipeline's counters, for status events and the final summary.
public struct PipelineSnapshot: Sendable {
  /// Samples handed to `append`, by track.
  public var appended: [Int] = [0, 0, 0]
  /// Samples the input refused before `append` (`Pipeline.sampleLost`), by track.
  public var lost = TrackCounts()
  /// Samples whose ADTS header was removed, by track.
  public var adtsRemoved = TrackCounts()
  /// The largest sample payload the pipeline takes (`Pipeline.maximumSampleBytes`).
  public var maximumSampleBytes = 0
  /// The largest sample refused as `tooLarge` (0: none).
  public var largestRefusedSample = 0
  /// Units delivered to the sink, by track.
  public var sent: [Int] = [0, 0, 0]
  /// Bytes delivered to the sink (PSI/PCR packets included).
  public var sentBytes: Int64 = 0
  /// Every drop and refusal by track and reason.
  public var drops = DropCounts()
  /// The current tier.
  public var tier = Tier.normal
  /// Units waiting in the ring.
  public var ringUnits = 0
  /// DTS span waiting in the ring, 90 kHz ticks.
  public var ringDuration: Int64 = 0
  /// Live bytes in the ring.
  public var ringBytes = 0
  /// The ledger now and its peak.
  public var ledger = 0
  public var peakLedger = 0
  /// The budget.
  public var budget = 0
  /// Last resident-memory reading and the peak of the readings (nil when unknown).
  public var resident: Int?
  public var peakResident: Int?
  /// Last pressure (0...1).
  public var pressure = 0.0
  /// Clock resets handled.
  public var discontinuities = 0
  /// DTS of the newest appended sample (ticks), for progress.
  public var newestDTS: Int64 = 0
  /// DTS of the first appended sample (ticks).
  public var firstDTS: Int64 = 0

  public init() {}

  /// Samples appended across tracks.
  public var totalAppended: Int { appended.reduce(0, +) }
  /// Units sent across tracks.
  public var totalSent: Int { sent.reduce(0, +) }
  /// Units in the ring or being sent: what is neither sent nor dropped yet.
  public var inFlight: Int { totalAppended - totalSent - drops.total }
}
