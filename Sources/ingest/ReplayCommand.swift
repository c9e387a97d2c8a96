/// `ingest replay`.
enum ReplayCommand: Command {
  static let name = "replay"
  static let summary = "(not yet available)"
  static let help = "usage: ingest replay"
  static func run(_ argv: [String]) throws -> Int32 { throw UsageError("not implemented") }
}
