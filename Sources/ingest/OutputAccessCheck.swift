import IngestCLI
import IngestPOSIX
import IngestSinks

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Checks, before anything is opened, that every local `--to` can be written: a directory that
/// does not exist or refuses new files is a mistake of the command line (exit 2, as for
/// `--status`), not a run that failed. Nothing is created here, so a dump without samples still
/// leaves no output behind.
enum OutputAccessCheck {
  /// Refuses a `.ts` file or HLS directory that cannot be created or written.
  static func checkWritable(_ targets: [OutputTarget]) throws(UsageError) {
    for target in targets {
      switch target {
      case .file(let path, _) where OutputTarget.isStandardOutput(path): continue
      case .file(let path, _), .mp4(let path, _): try checkFile(path)
      case .hls(let directory, _, _, _): try checkDirectory(directory)
      case .null, .srt, .rtmp, .whip: continue
      }
    }
  }

  /// Refuses a `.ts`, `.mp4` or `.mov` output that names an existing regular file, unless
  /// `overwrite` (`-y`, `--force`, as for `ingest capture`) says to replace it: a recording
  /// must never silently take the place of a file the user has. A FIFO or a device (`/dev/null`)
  /// loses nothing by being written; an HLS directory is resumed, not replaced.
  static func checkNotOverwriting(_ targets: [OutputTarget], overwrite: Bool) throws(UsageError) {
    guard !overwrite else { return }
    for target in targets {
      switch target {
      case .file(let path, _) where OutputTarget.isStandardOutput(path): continue
      case .file(let path, _), .mp4(let path, _):
        guard fileKind(path) == S_IFREG else { continue }
        throw UsageError(
          "--to \(SystemPath.display(path)) exists: add -y (or --force) to overwrite it,"
            + " or choose another name")
      case .hls, .null, .srt, .rtmp, .whip: continue
      }
    }
  }

  /// Refuses what would mix with a stream on standard output (`--to -`): `--json` and
  /// `--status -`, which write there too; a terminal, which cannot show a stream; and a
  /// standard output that cannot be opened again as `/dev/stdout` (closed, or a socket).
  /// - Parameters:
  ///   - json: whether `--json` was given.
  ///   - status: the `--status` destination, if given.
  static func checkStandardOutput(
    _ targets: [OutputTarget], json: Bool, status: String?
  ) throws(UsageError) {
    let toStandardOutput = targets.contains { target in
      if case .file(let path, _) = target { OutputTarget.isStandardOutput(path) } else { false }
    }
    guard toStandardOutput else { return }
    if json {
      throw UsageError(
        "--json and --to - both write standard output: drop --json and give --status FILE"
          + " (its last event is the summary), or send the stream to a file")
    }
    if status == "-" {
      throw UsageError(
        "--status - and --to - both write standard output: give --status a FILE instead")
    }
    if isatty(1) != 0 {
      throw UsageError(
        "--to - writes a binary stream to standard output, which is a terminal: pipe it"
          + " (--to - | ffplay -) or redirect it (--to - > out.ts)")
    }
    var info = stat()
    guard fstat(1, &info) == 0 else {
      throw UsageError("--to -: standard output is closed; give a file instead (--to out.ts)")
    }
    // Linux cannot open a socket through /dev/stdout (ENXIO); a pipe in between can.
    if info.st_mode & S_IFMT == S_IFSOCK {
      throw UsageError(
        "--to -: standard output is a socket, which cannot carry the stream directly:"
          + " put a pipe in between (--to - | cat | ...)")
    }
  }

  /// A file exists and is writable, or its directory exists and takes new files.
  private static func checkFile(_ path: String) throws(UsageError) {
    let shown = SystemPath.display(path)
    if let kind = fileKind(path) {
      if kind == S_IFDIR {
        throw UsageError("--to \(shown) is a directory: name a .ts file in it, or use hls:\(shown)")
      }
      try checkAccess(path, W_OK, "--to: cannot write \(shown)")
      return
    }
    try checkParent(of: path, for: "--to \(shown)")
  }

  /// An HLS directory exists and takes new files, or its parent does (it is created there).
  private static func checkDirectory(_ directory: String) throws(UsageError) {
    let shown = SystemPath.display(directory)
    if let kind = fileKind(directory) {
      guard kind == S_IFDIR else {
        throw UsageError("--to hls:\(shown) is not a directory: name a directory for the segments")
      }
      try checkAccess(directory, W_OK | X_OK, "--to: cannot create files in \(shown)")
      return
    }
    try checkParent(of: directory, for: "--to hls:\(shown)")
  }

  /// The directory `path` would be created in exists and takes new entries.
  private static func checkParent(of path: String, for what: String) throws(UsageError) {
    let slash = path.lastIndex(of: "/")
    let parent = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
    let shown = SystemPath.display(parent)
    guard let kind = fileKind(parent) else {
      throw UsageError(
        "\(what): the directory \(shown) does not exist; create it first (mkdir -p \(shown))")
    }
    guard kind == S_IFDIR else { throw UsageError("\(what): \(shown) is not a directory") }
    try checkAccess(parent, W_OK | X_OK, "\(what): cannot create files in \(shown)")
  }

  private static func checkAccess(_ path: String, _ mode: Int32, _ message: String)
    throws(UsageError)
  {
    guard SystemPath.withCString(path, { access($0, mode) }) == 0 else {
      throw UsageError(message + ": " + String(cString: strerror(errno)))
    }
  }

  /// The file type bits of `path` (following links), or nil when nothing is there.
  private static func fileKind(_ path: String) -> mode_t? {
    var info = stat()
    guard SystemPath.withCString(path, { stat($0, &info) }) == 0 else { return nil }
    return info.st_mode & S_IFMT
  }
}
