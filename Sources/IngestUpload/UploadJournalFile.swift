import IngestPOSIX

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The upload journal on disk: locked, read once when opened, then appended to, every line synced
/// before `append` returns so that what it says survives a kill or a power cut.
///
/// The lock is an exclusive `flock` on the journal, taken without waiting and held while the file
/// is open: one uploader per journal, so one per recording directory unless `--journal` puts it
/// elsewhere. The kernel drops it when its holder exits in any way, so a killed uploader leaves
/// no stale lock behind.
final class UploadJournalFile {
  let path: String
  private(set) var journal: UploadJournal
  private let fd: FileDescriptor

  /// Opens (or creates) the journal at `path`, locks it and starts a session for `destination`.
  /// - Parameter directory: the recording, for messages.
  /// - Throws: `UploadError.locked` while another uploader holds it, `.symbolicLink` when `path`
  ///   is one, `.file` when it cannot be opened, read or written.
  init(path: String, directory: String, destination: String) throws(UploadError) {
    self.path = path
    let existed = UploadFiles.stamp(of: path) != nil
    do {
      fd = try FileDescriptor.open(path, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW)
    } catch {
      if error.code == ELOOP { throw .symbolicLink(path: path) }
      throw .file(FileError(operation: "open", path: path, errno: error.code))
    }
    let descriptor = fd.rawValue
    let locked = FileDescriptor.retryingOnInterrupt(
      { flock(descriptor, LOCK_EX | LOCK_NB) }, failed: { $0 != 0 })
    if case .failure(let error) = locked {
      fd.close()
      if error.code == EWOULDBLOCK { throw .locked(directory: directory, journal: path) }
      throw .file(FileError(operation: "lock", path: path, errno: error.code))
    }
    // Read under the lock, so that the lines seen are all there will be until it is released.
    let existing: [UInt8]
    do { existing = try Self.readAll(fd) } catch {
      fd.close()
      throw .file(FileError(operation: "read", path: path, errno: error.code))
    }
    journal = UploadJournal.parse(
      String(decoding: existing, as: UTF8.self), destination: destination)
    if !existed { try UploadFiles.syncDirectory(Self.parent(of: path)) }
    if journal.endsWithTornLine { try write(UploadJournal.tornLineEnd) }
    if journal.destination != destination {
      try write(UploadJournal.uploadLine(destination: destination))
    }
  }

  deinit { fd.close() }

  /// Records that a PUT of `name` starts.
  func started(_ name: String, bytes: Int64) throws(UploadError) {
    try write(UploadJournal.sendLine(name, bytes: bytes))
    journal.recordStarted(name)
  }

  /// Records that the whole body of the PUT of `name` went out (the answer still to come).
  func bodySent(_ name: String, bytes: Int64) throws(UploadError) {
    try write(UploadJournal.sentLine(name, bytes: bytes))
    journal.recordBodySent(name)
  }

  /// Records that the server confirmed `name`.
  func confirmed(_ name: String, bytes: Int64) throws(UploadError) {
    try write(UploadJournal.doneLine(name, bytes: bytes))
    journal.recordConfirmed(name, bytes: bytes)
  }

  private func write(_ line: String) throws(UploadError) {
    do {
      try fd.writeAll(line)
      try fd.sync()
    } catch {
      throw .file(FileError(operation: "append to", path: path, errno: error.code))
    }
  }

  /// The whole file from its start (`pread`: the descriptor's offset is of no use with
  /// `O_APPEND`).
  private static func readAll(_ fd: FileDescriptor) throws(Errno) -> [UInt8] {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 << 10)
    while true {
      let offset = off_t(bytes.count)
      let result = chunk.withUnsafeMutableBytes { buffer in
        FileDescriptor.retryingOnInterrupt(
          { pread(fd.rawValue, buffer.baseAddress, buffer.count, offset) }, failed: { $0 < 0 })
      }
      switch result {
      case .success(let n):
        if n == 0 { return bytes }
        bytes += chunk[..<n]
      case .failure(let error): throw error
      }
    }
  }

  /// The directory holding `path`, whose entry for a new journal must be synced.
  private static func parent(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
  }
}
