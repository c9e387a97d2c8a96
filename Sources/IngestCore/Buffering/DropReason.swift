/// Why an access unit did not reach the sink. Every drop and refusal is counted by track and reason.
public enum DropReason: Int, CaseIterable, Sendable, CustomStringConvertible {
  /// A disposable video frame (every NAL with nal_ref_idc 0) dropped to make room.
  case disposable = 0
  /// The rest of a GOP from its first dropped frame, so no frame follows a missing reference.
  case gopTail
  /// A whole GOP, keyframe included, while a newer keyframe waits in the ring.
  case oldestGOP
  /// Audio dropped from the head of the ring to make room (mic first, then app).
  case audio
  /// Video that arrived while the stream waits for a keyframe after a drop.
  case awaitingKeyframe
  /// Degradation tier 2: disposable frames dropped on arrival.
  case tierDisposable
  /// Degradation tier 3: microphone audio not accepted.
  case tierMic
  /// Degradation tier 4: only keyframes accepted.
  case tierKeyframesOnly
  /// Skipped to the newest keyframe after the sink reconnected.
  case reconnect
  /// Refused: the ring could not make room (the ledger is at 100% of the budget).
  case ringFull
  /// Refused: the sample was malformed (bad timestamp, NAL past the end, no format yet).
  case invalid
  /// Taken off the ring by the output without being sent: a track the output cannot carry
  /// (an RTMP output carries one audio track unless both were asked for).
  case notCarried
  /// Refused: the sample is larger than the largest the pipeline takes
  /// (`Pipeline.maximumSampleBytes`: the format's limit or what the ring holds at the budget).
  case tooLarge
  /// Refused: audio on a coarse clock (several frames on one timestamp) that came before any
  /// track with a fine clock, so its place on the timeline is not known yet
  /// (`TimelineError.awaitingSharedClock`).
  case awaitingClock
  /// Video that arrived after a frame it precedes in decode order (its DTS steps back): its
  /// picture and every one after it up to the next keyframe would decode against the wrong
  /// references, so they are dropped and a keyframe is asked for.
  case outOfOrder
  /// Audio whose clock, after a burst of frames delivered with one time, is behind where those
  /// frames were placed: dropped until it catches up, so the track comes back to its clock
  /// instead of staying behind the video (`TimelineError.behindPlacedFrames`).
  case catchingUp

  /// The name used in status events and summaries.
  public var description: String {
    switch self {
    case .disposable: "disposable"
    case .gopTail: "gopTail"
    case .oldestGOP: "oldestGOP"
    case .audio: "audio"
    case .awaitingKeyframe: "awaitingKeyframe"
    case .tierDisposable: "tierDisposable"
    case .tierMic: "tierMic"
    case .tierKeyframesOnly: "tierKeyframesOnly"
    case .reconnect: "reconnect"
    case .ringFull: "ringFull"
    case .invalid: "invalid"
    case .notCarried: "notCarried"
    case .tooLarge: "tooLarge"
    case .awaitingClock: "awaitingClock"
    case .outOfOrder: "outOfOrder"
    case .catchingUp: "catchingUp"
    }
  }

  /// Refusals happen before the ring took the sample; drops after.
  public var isRefusal: Bool {
    self == .ringFull || self == .invalid || self == .tooLarge || self == .awaitingClock
  }
}

/// Counts of dropped access units by track and reason. A fixed-size value: no allocation to update.
public struct DropCounts: Equatable, Sendable {
  private var counts: [Int]

  public init() {
    counts = [Int](repeating: 0, count: SampleKind.allCases.count * DropReason.allCases.count)
  }

  /// A copy with storage of its own. A plain copy would share the array until the next count,
  /// and that count (on the capture thread) would then pay for the copy.
  public func detached() -> DropCounts {
    var copy = self
    copy.counts = counts.map { $0 }
    return copy
  }

  /// The count for one track and reason.
  public subscript(kind: SampleKind, reason: DropReason) -> Int {
    get { counts[Int(kind.rawValue) * DropReason.allCases.count + reason.rawValue] }
    set { counts[Int(kind.rawValue) * DropReason.allCases.count + reason.rawValue] = newValue }
  }

  /// All drops of one track.
  public func total(_ kind: SampleKind) -> Int {
    DropReason.allCases.reduce(0) { $0 + self[kind, $1] }
  }

  /// All drops of one reason.
  public func total(_ reason: DropReason) -> Int {
    SampleKind.allCases.reduce(0) { $0 + self[$1, reason] }
  }

  /// Every drop and refusal.
  public var total: Int { counts.reduce(0, +) }
}
