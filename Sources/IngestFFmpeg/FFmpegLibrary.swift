import CFFmpeg

/// libavformat is loaded on first use (see `CFFmpeg/shim.h`): only capture and RTMP need it, and
/// linking it would cost every run ~27 MB of resident memory.
package enum FFmpegLibrary {
  /// Nil once the library is loaded, else a message saying what is missing.
  package static var loadError: String? {
    guard cffmpeg_load() == 0 else { return nil }
    return
      "cannot load \(String(cString: cffmpeg_soname())): install libavformat59 (apt-get install ffmpeg)"
  }
}
