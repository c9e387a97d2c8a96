/// The message for a system library that could not be loaded (dlopen): "install it" only when
/// it is missing. An installed library can fail too, for want of address space (`ulimit -v`)
/// or a broken dependency, and asking to install what is installed misleads.
public enum LibraryLoadFailure {
  /// - Parameters:
  ///   - soname: the library asked for (`libavformat.so.59`).
  ///   - reason: dlerror's text for the failure.
  ///   - install: what installs it (`install libavformat59 (apt-get install ffmpeg)`).
  public static func message(soname: String, reason: String, install: String) -> String {
    if reason.isEmpty || reason.contains("No such file") {
      return "cannot load \(soname): \(install)"
    }
    var message = "cannot load \(soname): \(reason)"
    if reason.contains("map segment") || reason.contains("allocate memory") {
      message += " (out of memory or address space: is `ulimit -v` set too low?)"
    }
    return message
  }
}
