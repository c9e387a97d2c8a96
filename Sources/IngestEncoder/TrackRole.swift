import IngestCore

/// Which dump track a source stream feeds.
enum TrackRole: Equatable {
  case video
  case appAudio
  case micAudio

  /// The dump's sample kind for this track.
  var kind: SampleKind {
    switch self {
    case .video: .video
    case .appAudio: .audioApp
    case .micAudio: .audioMic
    }
  }
}
