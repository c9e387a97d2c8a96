/// The three sample streams a ReplayKit broadcast extension receives after its encoders.
///
/// The raw values are part of the dump format (see `docs/dump-format.md`); never renumber them.
public enum SampleKind: UInt8, Sendable, CaseIterable, CustomStringConvertible {
  /// H.264 screen video.
  case video = 0
  /// AAC audio of the app being broadcast.
  case audioApp = 1
  /// AAC audio of the microphone.
  case audioMic = 2

  /// Whether this is one of the two audio kinds.
  @inlinable public var isAudio: Bool { self != .video }

  /// The name used in the CLI, status events and the dump format document.
  public var description: String {
    switch self {
    case .video: "video"
    case .audioApp: "audioApp"
    case .audioMic: "audioMic"
    }
  }
}
