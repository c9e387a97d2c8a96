import IngestPOSIX

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The upload journal on disk: read once when opened, then appended to, every line synced
/// before `append` returns so that what it says survives a kill or a power cut.
final class UploadJournalFile {
  let path: String
  private(set) var journal: UploadJournal
  private let fd: FileDescriptor

  /// Opens (or creates) `directory/upload.journal` and starts a session for `destination`.
  init(directory: String, destination: String) throws(UploadError) {
    path = UploadFiles.join(directory, UploadJournal.fileName)
    let existing = try UploadFiles.read(path)
    journal = UploadJournal.parse(
      String(decoding: existing ?? [], as: UTF8.self), destination: destination)
    do {
      fd = try FileDescriptor.open(path, O_WRONLY | O_APPEND | O_CREAT)
    } catch {
      throw .file(FileError(operation: "open", path: path, errno: error.code))
    }
    if existing == nil { try UploadFiles.syncDirectory(directory) }
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
}
