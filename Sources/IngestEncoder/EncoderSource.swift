/// What the encoder reads, as named on the command line.
///
/// ```
/// testsrc            testsrc2 video with a moving clock, a 1 kHz beep as app audio and a
///                    440 Hz beep as mic audio (libavfilter, through the lavfi device)
/// lavfi:GRAPH        any libavfilter source graph (outputs out0, out1, ...), e.g.
///                    lavfi:testsrc2=size=640x360:rate=30[out0];sine[out1]
/// x11:DISPLAY        an X11 display through x11grab, e.g. x11::99
/// sine               (for --mic) a 440 Hz beep
/// PATH               a media file, played at its own pace
/// ```
public enum EncoderSource: Equatable, Sendable, CustomStringConvertible {
  /// The built-in test pattern with app and mic audio.
  case testPattern
  /// A libavfilter source graph read through the lavfi device.
  case lavfi(String)
  /// An X11 display, e.g. ":99".
  case x11(String)
  /// A media file.
  case file(String)

  /// Parses a source argument; `mic` selects the meaning of `sine` and `testsrc` for `--mic`.
  public init(parsing text: String, mic: Bool = false) {
    if text == "testsrc" || text == "testsrc2" {
      self = mic ? .lavfi("sine=frequency=440:beep_factor=2:sample_rate=48000") : .testPattern
    } else if text == "sine" {
      self = .lavfi("sine=frequency=440:beep_factor=2:sample_rate=48000")
    } else if text.hasPrefix("lavfi:") {
      self = .lavfi(String(text.dropFirst("lavfi:".count)))
    } else if text.hasPrefix("x11:") {
      self = .x11(String(text.dropFirst("x11:".count)))
    } else {
      self = .file(text)
    }
  }

  public var description: String {
    switch self {
    case .testPattern: "testsrc"
    case .lavfi(let graph): "lavfi:\(graph)"
    case .x11(let display): "x11:\(display)"
    case .file(let path): path
    }
  }

  /// Files are paced by their timestamps and may loop; devices deliver in real time themselves.
  var isFile: Bool {
    if case .file = self { return true }
    return false
  }
}
