/// `ingest inspect`.
enum InspectCommand: Command {
  static let name = "inspect"
  static let summary = "(not yet available)"
  static let help = "usage: ingest inspect"
  static func run(_ argv: [String]) throws -> Int32 { throw UsageError("not implemented") }
}
