/// Why the encoder cannot start or go on. Every case is a clear message for the user and exit
/// status 1 (usage errors are `EncoderUsageError`, exit status 2).
public enum EncoderError: Error, Equatable, CustomStringConvertible {
  /// The media file does not exist or cannot be read.
  case missingFile(String)
  /// The source opened but has no video stream to encode.
  case noVideo(String)
  /// The X11 display cannot be opened (no server, or no such display).
  case unknownDisplay(String, reason: String)
  /// libavformat/libavdevice could not open the source.
  case cannotOpen(String, reason: String)
  /// A decoder, filter or encoder could not be set up or failed.
  case codec(String, reason: String)
  /// The dump could not be written (other than the reader going away, which ends the run).
  case output(String)

  public var description: String {
    switch self {
    case .missingFile(let path): "cannot open \(path): no such file"
    case .noVideo(let source): "\(source) has no video stream"
    case .unknownDisplay(let display, let reason):
      "cannot open X11 display \(display): \(reason)"
    case .cannotOpen(let source, let reason): "cannot open \(source): \(reason)"
    case .codec(let what, let reason): "\(what): \(reason)"
    case .output(let reason): "cannot write the dump: \(reason)"
    }
  }
}
