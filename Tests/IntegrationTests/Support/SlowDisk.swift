import Foundation
import Glibc
import IngestTestSupport

/// A directory on a slow disk: `Scripts/bench-support/slow_disk.py`, a FUSE file system over a
/// backing directory whose writes go at a fixed rate, mounted for the test and unmounted by
/// `stop` (SIGTERM: libfuse unmounts).
final class SlowDisk {
  /// Where to write: the mount point.
  let path: String
  private let child: WatchedProcess

  static let script = CommandRunner.packageRoot.appending(
    path: "Scripts/bench-support/slow_disk.py"
  ).path

  /// Why a slow disk cannot be mounted here (no FUSE device, no fusepy or libfuse2), or nil.
  static var unavailableReason: String? {
    guard FileManager.default.fileExists(atPath: "/dev/fuse") else { return "/dev/fuse is missing" }
    let check = try? CommandRunner.run("python3", ["-c", "import fuse"])
    guard check?.status == 0 else { return "python3 with fusepy (and libfuse2) is missing" }
    return nil
  }

  /// Mounts a slow disk at `directory/mount`, backed by `directory/backing`, whose writes go
  /// at `bytesPerSecond`; returns once it is mounted.
  init(directory: URL, bytesPerSecond: Int) throws {
    let backing = directory.appending(path: "backing").path
    path = directory.appending(path: "mount").path
    for directory in [backing, path] {
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }
    child = try WatchedProcess(
      [
        "python3", Self.script, "--backing", backing, "--mount", path, "--rate",
        String(bytesPerSecond),
      ], namespace: nil, stdout: nil, readyMarker: "slow-disk mounted")
  }

  /// Unmounts the disk (what was written stays in the backing directory).
  func stop() {
    child.stop(signal: SIGTERM)
    // A file system whose process died without unmounting leaves a mount nobody answers.
    _ = try? CommandRunner.run("umount", ["-l", path])
  }

  deinit { stop() }
}
