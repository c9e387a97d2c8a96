/// One `ingest` subcommand.
package protocol Command {
  /// The word after `ingest`.
  static var name: String { get }
  /// One line for the top-level help.
  static var summary: String { get }
  /// The full `--help` text.
  static var help: String { get }
  /// Runs the command; returns the process exit status (0 ok, 1 runtime error).
  /// Throws `UsageError` for a bad invocation (exit 2); other errors exit 1.
  static func run(_ argv: [String]) throws -> Int32
}
