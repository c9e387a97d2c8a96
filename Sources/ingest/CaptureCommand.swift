/// `ingest capture`.
enum CaptureCommand: Command {
  static let name = "capture"
  static let summary = "(not yet available)"
  static let help = "usage: ingest capture"
  static func run(_ argv: [String]) throws -> Int32 { throw UsageError("not implemented") }
}
