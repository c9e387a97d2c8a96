/// The codec configuration of every track present: what the PMT lists, what a sink is opened
/// with. A track absent from the input is absent here.
public struct TrackFormats: Hashable, Sendable {
  /// The video configuration, or nil without video.
  public var video: VideoFormat?
  /// The app audio configuration, or nil without app audio.
  public var audioApp: AACFormat?
  /// The microphone audio configuration, or nil without mic audio.
  public var audioMic: AACFormat?

  public init(video: VideoFormat? = nil, audioApp: AACFormat? = nil, audioMic: AACFormat? = nil) {
    self.video = video
    self.audioApp = audioApp
    self.audioMic = audioMic
  }

  /// Tracks with H.264 video.
  public init(video: H264Format, audioApp: AACFormat? = nil, audioMic: AACFormat? = nil) {
    self.init(video: .h264(video), audioApp: audioApp, audioMic: audioMic)
  }

  /// Tracks with HEVC video.
  public init(video: HEVCFormat, audioApp: AACFormat? = nil, audioMic: AACFormat? = nil) {
    self.init(video: .hevc(video), audioApp: audioApp, audioMic: audioMic)
  }

  /// Whether a track of `kind` is present.
  public func contains(_ kind: SampleKind) -> Bool { format(for: kind) != nil }

  /// The configuration of `kind`, or nil when the track is absent.
  public func format(for kind: SampleKind) -> FormatDescription? {
    switch kind {
    case .video: video?.description
    case .audioApp: audioApp.map { .aac($0) }
    case .audioMic: audioMic.map { .aac($0) }
    }
  }

  /// Replaces the configuration of `kind` with `format`; a format of the wrong kind (video for
  /// audio, AAC for video) is ignored. A new video codec replaces the old one's format too.
  public mutating func set(_ format: FormatDescription, for kind: SampleKind) {
    switch (kind, format) {
    case (.video, .h264(let h264)): video = .h264(h264)
    case (.video, .hevc(let hevc)): video = .hevc(hevc)
    case (.audioApp, .aac(let aac)): audioApp = aac
    case (.audioMic, .aac(let aac)): audioMic = aac
    default: break
    }
  }

  /// The present tracks in PID order.
  public var kinds: [SampleKind] { SampleKind.allCases.filter { contains($0) } }
}
