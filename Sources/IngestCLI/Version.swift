/// The package's version, as every executable's `--version` prints it.
package enum Version {
  /// The one place the version is written; raised with each release.
  package static let number = "0.1.0"

  /// The `--version` line of `program` (`ingest`, `ingest upload`).
  package static func line(_ program: String) -> String { "\(program) \(number)" }
}
