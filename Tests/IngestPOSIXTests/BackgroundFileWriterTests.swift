import Foundation
import Glibc
import Testing

@testable import IngestPOSIX

@Suite struct BackgroundFileWriterTests {
  private func temporaryPath(_ name: String) -> String {
    NSTemporaryDirectory() + "bgwriter-\(getpid())-\(name)"
  }

  /// Writes of every size (below, at and far above a buffer) reach the file in order, and once
  /// closed the file took all of them.
  @Test func theFileHoldsEveryByteInOrder() throws {
    let path = temporaryPath("order")
    defer { unlink(path) }
    let writer = try BackgroundFileWriter(path: path, bufferCapacity: 4096, bufferCount: 3)
    var expected: [UInt8] = []
    var generator = SystemRandomNumberGenerator()
    for size in [1, 187, 188, 4095, 4096, 4097, 10_000, 0, 3, 50_000]
      + (0..<200).map({ _ in
        Int.random(in: 1...9000, using: &generator)
      })
    {
      let chunk = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
      expected += chunk
      try chunk.withUnsafeBytes { try writer.write($0) }
    }
    try writer.close()
    #expect(writer.bytesWritten == Int64(expected.count))
    #expect(writer.bytesStored == Int64(expected.count))
    let written = try Data(contentsOf: URL(fileURLWithPath: path))
    #expect(written.count == expected.count)
    #expect(Array(written) == expected)
  }

  /// `flush` returns once the file holds what was written, while the writer stays open.
  @Test func flushWaitsForTheFile() throws {
    let path = temporaryPath("flush")
    defer { unlink(path) }
    let writer = try BackgroundFileWriter(path: path, bufferCapacity: 1024)
    try Array(repeating: UInt8(7), count: 1500).withUnsafeBytes { try writer.write($0) }
    try writer.flush()
    #expect(writer.bytesStored == 1500)
    var status = stat()
    #expect(stat(path, &status) == 0)
    #expect(status.st_size == 1500)
    try writer.close()
  }

  /// /dev/full refuses every write(2): the failure surfaces as a full disk by `close` at the
  /// latest, and nothing counts as stored.
  @Test func aFullDiskIsReportedAndNothingCountsAsStored() throws {
    let writer = try BackgroundFileWriter(path: "/dev/full", bufferCapacity: 1024)
    var failure: FileError?
    do {
      for _ in 0..<8 {
        try [UInt8](repeating: 1, count: 1000).withUnsafeBytes { try writer.write($0) }
      }
      try writer.close()
    } catch let error as FileError {
      failure = error
    } catch {
      Issue.record("unexpected \(error)")
    }
    #expect(failure?.isDiskFull == true)
    #expect(failure?.operation == "write")
    #expect(writer.bytesStored == 0)
    #expect(writer.bytesWritten > 0)
    try? writer.close()
  }

  @Test func aMissingDirectoryIsNamed() {
    #expect(
      throws: FileError(operation: "create", path: "/nonexistent-dir-for-tests/a.ts", errno: ENOENT)
    ) {
      _ = try BackgroundFileWriter(path: "/nonexistent-dir-for-tests/a.ts")
    }
  }

  @Test func aWriteAfterCloseFails() throws {
    let path = temporaryPath("closed")
    defer { unlink(path) }
    let writer = try BackgroundFileWriter(path: path)
    try writer.close()
    #expect(throws: FileError(operation: "write", path: path, errno: EBADF)) {
      try [UInt8(1)].withUnsafeBytes { try writer.write($0) }
    }
  }
}
