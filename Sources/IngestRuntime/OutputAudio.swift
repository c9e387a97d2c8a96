import IngestCore
import IngestSinks

/// The audio one output carries, decided from `--audio`, the output and the input's tracks.
public enum OutputAudio: Sendable, Equatable {
  /// The input has no audio track.
  case none
  /// One of the input's audio tracks as it is; the other (if any) is not sent.
  case track(SampleKind)
  /// Both tracks as they are: two audio streams.
  case both
  /// App and mic mixed into one AAC track at these gains.
  case mix(AudioMixGains)
  /// The input's one audio track is the encoder's mix of app and mic at these gains
  /// (`ingest live --encoder-mix`).
  case encoderMix(AudioMixGains)

  /// What `target` carries of `tracks` when `selection` was asked for (nil: the default). An
  /// input with one audio track sends it whatever was asked (a mix of one track is that
  /// track). With both: WHIP, which carries one audio track, mixes unless `app` or `mic` was
  /// asked for. RTMP mixes by default (a server or player without Enhanced RTMP takes one audio
  /// track); `both` sends the mic as an E-RTMP v2 multitrack track beside the app's. HLS mixes
  /// by default too: players at their defaults (hls.js, GStreamer's
  /// playbin3) play a variant's segments with one audio track beside the video and refuse or
  /// ignore a second, as Apple's HLS authoring rules expect; `both` keeps the two tracks there.
  /// The files (`.ts`, `.mp4`) and SRT keep both unless asked otherwise. An `hls:` output's own
  /// `?audio=` goes before `selection`.
  /// - Parameter mixedByEncoder: the gains the encoder mixed the input's app track with, when
  ///   it did.
  public init(
    selection: AudioSelection?, target: OutputTarget, tracks: TrackFormats, gains: AudioMixGains,
    mixedByEncoder: AudioMixGains? = nil
  ) {
    var selection = selection
    if case .hls(_, _, _, let asked?) = target { selection = asked }
    switch (tracks.audioApp != nil, tracks.audioMic != nil) {
    case (false, false): self = .none
    case (true, false):
      self = mixedByEncoder.map { .encoderMix($0) } ?? .track(.audioApp)
    case (false, true): self = .track(.audioMic)
    case (true, true):
      let carriesOne: Bool
      let mixesByDefault: Bool
      switch target {
      case .whip: (carriesOne, mixesByDefault) = (true, true)
      case .rtmp, .hls: (carriesOne, mixesByDefault) = (false, true)
      default: (carriesOne, mixesByDefault) = (false, false)
      }
      switch selection {
      case .app?: self = .track(.audioApp)
      case .mic?: self = .track(.audioMic)
      case .mix?: self = .mix(gains)
      case .both?: self = carriesOne ? .mix(gains) : .both
      case nil: self = mixesByDefault ? .mix(gains) : .both
      }
    }
  }

  /// Whether the output's audio is a mix.
  public var isMix: Bool {
    if case .mix = self { return true }
    return false
  }

  /// The `--audio` word for it, as the summary's `audio` member gives it.
  public var name: String {
    switch self {
    case .none: "none"
    case .track(let kind): kind == .audioApp ? "app" : "mic"
    case .both: "both"
    case .mix, .encoderMix: "mix"
    }
  }

  /// One line for the text summary: which audio went.
  public var note: String? {
    switch self {
    case .none: nil
    case .track(let kind): "\(kind) only, one track"
    case .both: "audioApp and audioMic, two tracks"
    case .mix(let gains):
      "audioApp and audioMic mixed into one AAC track (gains \(gains), limited)"
    case .encoderMix(let gains):
      "app and mic mixed by the encoder into one AAC track (gains \(gains), limited)"
    }
  }
}
