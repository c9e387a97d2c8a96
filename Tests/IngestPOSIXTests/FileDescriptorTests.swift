import Glibc
import Testing

@testable import IngestPOSIX

@Suite struct FileDescriptorTests {
  /// A pipe's two ends, closed by the caller.
  private func makePipe() throws -> (read: FileDescriptor, write: FileDescriptor) {
    var ends: [Int32] = [-1, -1]
    try #require(pipe(&ends) == 0)
    return (FileDescriptor(rawValue: ends[0]), FileDescriptor(rawValue: ends[1]))
  }

  @Test func writeAllThenReadBack() throws {
    let (reader, writer) = try makePipe()
    defer {
      reader.close()
      writer.close()
    }
    try writer.writeAll("hello, pipe")
    var buffer = [UInt8](repeating: 0, count: 64)
    let count = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
    #expect(String(decoding: buffer[..<count], as: UTF8.self) == "hello, pipe")
  }

  @Test func readAtEndOfFileIsZero() throws {
    let (reader, writer) = try makePipe()
    writer.close()
    defer { reader.close() }
    var buffer = [UInt8](repeating: 0, count: 8)
    #expect(try buffer.withUnsafeMutableBytes { try reader.read(into: $0) } == 0)
  }

  @Test func openNamesTheSystemReason() {
    #expect(throws: Errno(ENOENT)) {
      try FileDescriptor.open("/nonexistent-dir-for-tests/file", O_RDONLY)
    }
    #expect(Errno(ENOENT).description == "No such file or directory")
  }

  @Test func writeToAFullDeviceFails() throws {
    let full = try FileDescriptor.open("/dev/full", O_WRONLY)
    defer { full.close() }
    #expect(throws: Errno(ENOSPC)) { try full.writeAll("x") }
  }

  @Test func retryingOnInterruptRetriesOnlyEINTR() throws {
    var calls = 0
    let retried = FileDescriptor.retryingOnInterrupt(
      { () -> Int in
        calls += 1
        errno = calls < 3 ? EINTR : 0
        return calls < 3 ? -1 : 7
      }, failed: { $0 < 0 })
    #expect(try retried.get() == 7)
    #expect(calls == 3)
    let failed = FileDescriptor.retryingOnInterrupt(
      { () -> Int in
        errno = EBADF
        return -1
      }, failed: { $0 < 0 })
    #expect(throws: Errno(EBADF)) { try failed.get() }
  }
}
