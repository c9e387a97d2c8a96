/// The text of an HTTP status line, as messages show it.
///
/// What a server sends is not trusted to be one clean line: the status line ends with CR LF, and
/// a broken or hostile server may put other control bytes in its reason phrase. Only printable
/// text is kept, so that a message stays one line on a terminal and a valid JSON string.
enum HTTPStatusLine {
  /// The longest text kept, in bytes (a reason phrase is a few words).
  static let maximumLength = 120

  /// The status and reason (`403 Forbidden`) of a response header line, or nil when the line is
  /// not a status line (`HTTP/…`).
  static func text(ofHeaderLine line: some Collection<UInt8>) -> String? {
    guard line.starts(with: "HTTP/".utf8), let space = line.firstIndex(of: UInt8(ascii: " "))
    else { return nil }
    var kept: [UInt8] = []
    // Bytes, not Characters: "\r\n" is one Character in Swift, so a Character test for "\r"
    // would let the line end through.
    for byte in line[line.index(after: space)...] {
      if byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\n") { break }
      guard kept.count < maximumLength else { break }
      kept.append(byte < 0x20 || byte == 0x7F ? UInt8(ascii: " ") : byte)
    }
    while kept.last == UInt8(ascii: " ") { kept.removeLast() }
    return String(decoding: kept, as: UTF8.self)
  }
}
