/// Extra request headers (auth), read from a file or an environment variable.
///
/// Their values are secrets: nothing in this module prints them, and errors name only the line
/// number. One `Name: value` per line; blank lines and lines starting with `#` are ignored.
public struct UploadHeaders: Equatable, Sendable {
  /// The header lines, as sent.
  public let lines: [String]

  public init() { lines = [] }

  /// Parses header text.
  /// - Parameter source: what the text came from, for error messages ("--header-file").
  public init(parsing text: String, source: String) throws(UploadError) {
    var lines: [String] = []
    var number = 0
    // "\r\n" is one Character in Swift, so both line ends are separators.
    for line in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
      number += 1
      let trimmed = line.drop(while: { $0 == " " || $0 == "\t" })
      if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
      guard let colon = line.firstIndex(of: ":"), colon != line.startIndex,
        line[..<colon].utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") }),
        !line.utf8.contains(where: { $0 < 0x20 && $0 != 0x09 })
      else {
        throw .invalidOption("\(source): line \(number) is not a 'Name: value' header")
      }
      lines.append(String(line))
    }
    self.lines = lines
  }
}
