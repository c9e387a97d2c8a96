import IngestCLI
import IngestPOSIX

#if canImport(Glibc)
  import Glibc
#endif

/// `ingest upload` runs `ingest-upload` (beside this program) in its place.
///
/// The uploader is the host app's side and links libcurl, which maps some thirty libraries (TLS,
/// HTTP/2, SSH, LDAP, Kerberos) and megabytes of resident memory into every process that links
/// it; kept out of `ingest`, the pipeline's runs never pay for it.
enum UploadLauncher: Command {
  static let name = "upload"
  static let summary = "upload an HLS recording with HTTP PUT, retrying and resuming"
  static let help = "usage: ingest upload DIR --to URL [options] (see ingest upload --help)"

  static func run(_ argv: [String]) throws -> Int32 { exec(argv) }

  /// Replaces this process with `ingest-upload ARGV`; returns only by exiting when that fails.
  static func exec(_ argv: [String]) -> Never {
    let path = Executable.sibling("ingest-upload", overriddenBy: "INGEST_UPLOAD_BIN")
    // The words as the kernel gave them to this process, not their escaped strings.
    let words = ([path] + argv).map { SystemPath.withCString($0) { strdup($0) } } + [nil]
    execv(path, words)
    Console.error("ingest upload: cannot run \(path): \(String(cString: strerror(errno)))")
    exit(1)
  }
}
