import IngestPOSIX
import IngestSinks

extension ReplaySession {
  /// Refuses a target that would write over the dump being read: a `.ts` file that is the dump
  /// or `.mp4` file that is the dump (or a link to it), or an HLS directory that holds it.
  /// - Throws: `ReplayError.usage` naming both paths.
  public static func refuseOverwritingInput(_ dumpPath: String, target: OutputTarget)
    throws(ReplayError)
  {
    switch target {
    case .file(let path, _) where SameFileCheck.isSameFile(path, dumpPath),
      .mp4(let path, _) where SameFileCheck.isSameFile(path, dumpPath):
      throw .usage("--to \(path) is the input \(dumpPath): it would be overwritten")
    case .hls(let directory, _, _, _) where SameFileCheck.isInDirectory(dumpPath, directory):
      throw .usage(
        "--to: the input \(dumpPath) is in the HLS directory \(directory), whose files are "
          + "rewritten: choose another directory")
    default:
      return
    }
  }
}
