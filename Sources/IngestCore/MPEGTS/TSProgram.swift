/// The single program of our transport stream: which of the three tracks are present and with
/// what configuration. A track absent from the input is absent from the PMT.
///
/// | track    | PID   | stream_type           |
/// |----------|-------|-----------------------|
/// | video    | 0x100 | 0x1B H.264, 0x24 HEVC |
/// | audioApp | 0x101 | 0x0F AAC in ADTS      |
/// | audioMic | 0x102 | 0x0F AAC in ADTS      |
///
/// The PCR travels on video if present, else on app audio, else on mic audio.
public typealias TSProgram = TrackFormats

extension TrackFormats {
  /// The track carrying the PCR, or nil for a program without tracks.
  public var pcrKind: SampleKind? {
    if video != nil { return .video }
    if audioApp != nil { return .audioApp }
    if audioMic != nil { return .audioMic }
    return nil
  }

  /// PCR_PID of the PMT; 0x1FFF (no PCR) for a program without tracks.
  public var pcrPID: UInt16 { pcrKind.map { TSPacket.pid(for: $0) } ?? 0x1FFF }

  /// The stream_type of a kind's elementary stream in this program.
  public func streamType(for kind: SampleKind) -> UInt8 {
    switch (kind, video) {
    case (.video, .hevc?): TSPacket.streamTypeHEVC
    case (.video, _): TSPacket.streamTypeH264
    case (.audioApp, _), (.audioMic, _): TSPacket.streamTypeAACADTS
    }
  }
}
