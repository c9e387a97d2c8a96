import CFFmpeg

/// libavformat is loaded on first use (see `CFFmpeg/shim.h`): only capture and RTMP need it, and
/// linking it would cost every run ~27 MB of resident memory.
package enum FFmpegLibrary {
  /// What installs libavformat, for messages.
  package static let install = "install libavformat59 (apt-get install ffmpeg)"

  /// Nil once the library is loaded, else the library asked for and dlerror's reason
  /// (`LibraryLoadFailure` in IngestCore makes the message of them).
  package static var loadFailure: (soname: String, reason: String)? {
    guard cffmpeg_load() == 0 else { return nil }
    return (String(cString: cffmpeg_soname()), String(cString: cffmpeg_load_error()))
  }
}
