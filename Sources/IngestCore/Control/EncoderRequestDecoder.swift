/// Splits the bytes of the encoder's input into lines and reads each as an `EncoderRequest`, in
/// whatever pieces the pipe delivers them.
///
/// ```
/// var decoder = EncoderRequestDecoder()
/// decoder.append(bytesJustRead)
/// while true {
///   do { guard let request = try decoder.next() else { break } … } catch { report it }
/// }
/// ```
///
/// `next()` returns nil until a whole line is there, skips blank lines, and throws for a line
/// that is not a request (which is consumed: the next call goes on with the line after it). A
/// line longer than `maximumLineBytes` is not kept: its bytes are dropped as they come and it is
/// reported once, as `.lineTooLong`, when its newline arrives.
public struct EncoderRequestDecoder: Sendable {
  /// Longer than any request or forwarded status line.
  public static let maximumLineBytes = 4096

  /// Complete lines not yet read, oldest first.
  private var lines: [Line] = []
  private var head = 0
  /// The line still open (no newline yet).
  private var partial: [UInt8] = []
  private var partialTooLong = false

  private enum Line {
    case text([UInt8])
    case tooLong
  }

  /// The start (at most 200 bytes) of the last line `next()` threw for, for its report.
  public private(set) var lastRejectedLine = ""

  public init() {}

  /// Adds bytes read from the input; cost linear in their count.
  public mutating func append(_ bytes: some Sequence<UInt8>) {
    for byte in bytes {
      guard byte == 0x0A else {
        if partial.count < Self.maximumLineBytes {
          partial.append(byte)
        } else {
          partialTooLong = true
        }
        continue
      }
      closeLine()
    }
  }

  /// The next request: nil when no complete line is left (more input is needed).
  /// - Throws: `EncoderRequestError` for a line that is not a request; that line is consumed.
  public mutating func next() throws(EncoderRequestError) -> EncoderRequest? {
    while head < lines.count {
      let line = lines[head]
      head += 1
      if head == lines.count {
        lines.removeAll(keepingCapacity: true)
        head = 0
      }
      switch line {
      case .tooLong:
        lastRejectedLine = ""
        throw .lineTooLong(limit: Self.maximumLineBytes)
      case .text(let bytes):
        guard bytes.contains(where: { !Self.isSpace($0) }) else { continue }
        do {
          return try EncoderRequest(lineBytes: bytes)
        } catch {
          lastRejectedLine = String(decoding: bytes.prefix(200), as: UTF8.self)
          throw error
        }
      }
    }
    return nil
  }

  /// At the end of the input: takes a last line that has no newline as complete, so `next()`
  /// reads it.
  public mutating func finish() {
    if !partial.isEmpty || partialTooLong { closeLine() }
  }

  private mutating func closeLine() {
    lines.append(partialTooLong ? .tooLong : .text(partial))
    partial.removeAll(keepingCapacity: true)
    partialTooLong = false
  }

  private static func isSpace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x09 || byte == 0x0D
  }
}
