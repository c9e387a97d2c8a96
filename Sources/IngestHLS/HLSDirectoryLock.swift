import IngestPlatform

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Makes one process at a time the writer of a recording directory: an exclusive advisory lock
/// (`flock`) on the directory itself, held while the run (or a recovery) writes it.
///
/// Nothing is added to the recording, and the kernel drops the lock when its holder exits in any
/// way, so a killed run leaves no stale lock behind. A second writer is refused at once.
final class HLSDirectoryLock {
  private var fd: Int32

  /// Takes the lock of `directory` without waiting.
  /// - Throws: `HLSError.locked` while another process holds it, `.file` when the directory
  ///   cannot be opened or locked.
  init(directory: String) throws(HLSError) {
    fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard fd >= 0 else {
      throw .file(FileError(operation: "open", path: directory, errno: errno))
    }
    let descriptor = fd
    let locked = FileDescriptor.retryingOnInterrupt(
      { flock(descriptor, LOCK_EX | LOCK_NB) }, failed: { $0 != 0 })
    if case .failure(let error) = locked {
      close(fd)
      fd = -1
      if error.code == EWOULDBLOCK { throw .locked(directory: directory) }
      throw .file(FileError(operation: "lock", path: directory, errno: error.code))
    }
  }

  deinit { release() }

  /// Gives the lock up (closing the descriptor releases it).
  func release() {
    if fd >= 0 { close(fd) }
    fd = -1
  }
}
