import Foundation
import Glibc
import IngestCore
import IngestPOSIX
import Testing

@testable import IngestWHIP

/// `WHIPChild`'s descriptors: its input is closed once, however often it is ended.
struct WHIPChildTests {
  /// The input's number is free after `closeInput`; a pipe made then may be given it. The
  /// child going away must not close that pipe too.
  @Test func theInputIsClosedOnceSoANumberGivenAgainStaysOpen() throws {
    var child: WHIPChild? = try WHIPChild(
      executable: "/bin/cat", arguments: [], token: nil, onLine: { _ in })
    child?.closeInput()
    #expect(child?.waitForEnd(until: SystemClock().now() + .seconds(60)) == true)
    var fds: [Int32] = [-1, -1]
    #expect(pipe(&fds) == 0)
    defer { for fd in fds { close(fd) } }
    _ = child?.wait()
    child = nil
    #expect(
      fcntl(fds[0], F_GETFD) != -1 && fcntl(fds[1], F_GETFD) != -1,
      "a pipe made after closeInput was closed")
  }
}
