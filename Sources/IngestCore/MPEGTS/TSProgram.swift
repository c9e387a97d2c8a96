/// The single program of our transport stream: which of the three tracks are present and with
/// what configuration. A track absent from the input is absent from the PMT.
///
/// | track    | PID   | stream_type      |
/// |----------|-------|------------------|
/// | video    | 0x100 | 0x1B H.264       |
/// | audioApp | 0x101 | 0x0F AAC in ADTS |
/// | audioMic | 0x102 | 0x0F AAC in ADTS |
///
/// The PCR travels on video if present, else on app audio, else on mic audio.
public struct TSProgram: Hashable, Sendable {
  /// The video configuration, or nil without video.
  public var video: H264Format?
  /// The app audio configuration, or nil without app audio.
  public var audioApp: AACFormat?
  /// The microphone audio configuration, or nil without mic audio.
  public var audioMic: AACFormat?

  public init(video: H264Format? = nil, audioApp: AACFormat? = nil, audioMic: AACFormat? = nil) {
    self.video = video
    self.audioApp = audioApp
    self.audioMic = audioMic
  }

  /// Whether `kind` is a track of the program.
  public func contains(_ kind: SampleKind) -> Bool { format(for: kind) != nil }

  /// The configuration of `kind`, or nil when the track is absent.
  public func format(for kind: SampleKind) -> FormatDescription? {
    switch kind {
    case .video: video.map { .h264($0) }
    case .audioApp: audioApp.map { .aac($0) }
    case .audioMic: audioMic.map { .aac($0) }
    }
  }

  /// The present tracks in PID order.
  public var kinds: [SampleKind] { SampleKind.allCases.filter { contains($0) } }

  /// The track carrying the PCR, or nil for a program without tracks.
  public var pcrKind: SampleKind? {
    if video != nil { return .video }
    if audioApp != nil { return .audioApp }
    if audioMic != nil { return .audioMic }
    return nil
  }

  /// PCR_PID of the PMT; 0x1FFF (no PCR) for a program without tracks.
  public var pcrPID: UInt16 { pcrKind.map { TSPacket.pid(for: $0) } ?? 0x1FFF }

  /// The stream_type of a kind's elementary stream.
  public static func streamType(for kind: SampleKind) -> UInt8 {
    kind == .video ? TSPacket.streamTypeH264 : TSPacket.streamTypeAACADTS
  }
}
