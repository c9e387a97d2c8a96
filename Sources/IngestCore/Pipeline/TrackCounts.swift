/// One count per track, stored inline: counting on the capture thread never allocates, and a
/// snapshot's copy shares no storage with the counters it was taken from.
public struct TrackCounts: Equatable, Sendable {
  private var video = 0
  private var audioApp = 0
  private var audioMic = 0

  public init() {}

  /// The count of one track.
  public subscript(kind: SampleKind) -> Int {
    get {
      switch kind {
      case .video: video
      case .audioApp: audioApp
      case .audioMic: audioMic
      }
    }
    set {
      switch kind {
      case .video: video = newValue
      case .audioApp: audioApp = newValue
      case .audioMic: audioMic = newValue
      }
    }
  }

  /// The counts of every track.
  public var total: Int { video + audioApp + audioMic }
}
