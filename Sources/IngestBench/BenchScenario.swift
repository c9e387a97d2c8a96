import IngestCore

/// A named benchmark scenario. Each runs in its own process, so the kernel's peak resident
/// figure (VmHWM) belongs to that scenario alone.
public enum BenchScenario: String, CaseIterable, Sendable {
  /// The sink takes everything at once: the capture path alone.
  case steady
  /// The link carries half the stream's bit rate: the ring fills, the ladder climbs, frames drop.
  case congested
  /// The link stalls for 10 s after 5 s, then recovers at twice the stream's bit rate.
  case outage
  /// Keyframe-heavy input: 2 s of every 6 s, every video frame is an IDR, on a link at 1.5 times
  /// the stream's mean bit rate.
  case burst
  /// The dump looped at maximum speed for a fixed wall time: memory must stay flat.
  case soak
  /// Real-time replay into an SRT listener (needs `--srt URL`): resident memory with libsrt.
  case srt
  /// Our MPEG-TS writer alone over the dump's samples in memory, on one core.
  case mux

  /// The scenarios `--all` runs; `srt` only when a listener is given.
  public static func all(withSRT: Bool) -> [BenchScenario] {
    allCases.filter { $0 != .srt || withSRT }
  }

  /// Whether the scenario drives the whole pipeline (all but `mux`).
  public var drivesPipeline: Bool { self != .mux }

  /// One line for the help and the report.
  public var summary: String {
    switch self {
    case .steady: "sink faster than the stream (unlimited), realtime pacing on a virtual clock"
    case .congested: "link at 1/2 of the stream's bit rate, realtime pacing on a virtual clock"
    case .outage: "link stalls 10 s at 5 s, then 2x the stream's bit rate; virtual clock"
    case .burst: "every video frame an IDR 2 s of every 6 s; link at 1.5x the mean bit rate"
    case .soak: "dump looped at maximum speed on the real clock, unlimited sink"
    case .srt: "realtime replay into an SRT listener (libsrt, sender thread)"
    case .mux: "TSPacketizer, then MP4Fragmenter, alone over the dump's samples in memory"
    }
  }
}

/// How a benchmark run is set up.
public struct BenchSettings: Sendable {
  /// The dump played (looped where a scenario needs more content).
  public var dumpPath: String
  /// A few seconds per scenario (the test suite's version).
  public var short = false
  /// An SRT listener for the `srt` scenario.
  public var srtURL: String?
  /// Overrides the soak's wall time.
  public var soakSeconds: Double?
  /// Overrides the length of every scenario: seconds of content on a virtual clock, wall
  /// seconds on the real one.
  public var seconds: Double?

  public init(dumpPath: String) { self.dumpPath = dumpPath }
}

/// The concrete parameters of one scenario.
public struct ScenarioPlan {
  enum Pacing { case realtime, maximum }

  var pacing = Pacing.realtime
  var virtualClock = true
  /// Seconds of content played (virtual clock), or nil to go by `wallSeconds`.
  var contentSeconds: Double?
  var wallSeconds: Double?
  /// Link rate as a fraction of the stream's transport bit rate; nil is unlimited.
  var linkFraction: Double?
  /// Outage start and length, seconds.
  var stall: (start: Double, duration: Double)?
  var burst: LoopingDump.Burst?

  init(_ scenario: BenchScenario, settings: BenchSettings) {
    let short = settings.short
    switch scenario {
    case .steady:
      contentSeconds = short ? 20 : 120
    case .congested:
      contentSeconds = short ? 30 : 60
      linkFraction = 0.5
    case .outage:
      contentSeconds = short ? 25 : 40
      linkFraction = 2
      stall = (5, 10)
    case .burst:
      contentSeconds = short ? 20 : 60
      linkFraction = 1.5
      burst = LoopingDump.Burst(period: .seconds(6), length: .seconds(2))
    case .soak:
      pacing = .maximum
      virtualClock = false
      wallSeconds = settings.soakSeconds ?? (short ? 3 : 60)
    case .srt:
      virtualClock = false
      wallSeconds = short ? 5 : 30
    case .mux:
      wallSeconds = short ? 0.3 : 3
    }
    if let seconds = settings.seconds {
      if contentSeconds != nil { contentSeconds = seconds } else { wallSeconds = seconds }
    }
  }

  /// Length of the run on its own clock.
  var length: TimeSpan { TimeSpan(seconds: (contentSeconds ?? wallSeconds) ?? 10) }
}

extension ScenarioPlan {
  /// How long the `mux` scenario packetizes.
  public static func muxSeconds(_ settings: BenchSettings) -> Double {
    ScenarioPlan(.mux, settings: settings).wallSeconds ?? 3
  }
}
