/// Multicast DNS messages (RFC 6762, on DNS's wire format, RFC 1035), as far as resolving a
/// WebRTC peer's `.local` host candidates needs: a query for A records, and the A records of
/// a response.
enum MDNSMessage {
  /// A query asking for the IPv4 address of each name (ID 0, as multicast queries carry; the
  /// class asks for a multicast answer, which every responder on the link sees).
  static func query(for names: [String]) -> [UInt8] {
    var bytes: [UInt8] = [0, 0, 0, 0]
    bytes += [UInt8(names.count >> 8 & 0xFF), UInt8(names.count & 0xFF), 0, 0, 0, 0, 0, 0]
    for name in names {
      for label in name.split(separator: ".") {
        let utf8 = Array(label.utf8.prefix(63))
        bytes.append(UInt8(utf8.count))
        bytes += utf8
      }
      bytes += [0, 0, 1, 0, 1]  // the root; type A, class IN
    }
    return bytes
  }

  /// The A records of a response, by name (lowercased, without the final dot), as dotted
  /// IPv4 addresses; empty for a query or a message that does not parse.
  static func addresses(in message: [UInt8]) -> [String: String] {
    guard message.count >= 12, message[2] & 0x80 != 0 else { return [:] }
    func count(_ offset: Int) -> Int { Int(message[offset]) << 8 | Int(message[offset + 1]) }
    var offset = 12
    for _ in 0..<count(4) {
      guard let (_, next) = name(in: message, at: offset), next + 4 <= message.count else {
        return [:]
      }
      offset = next + 4
    }
    var found: [String: String] = [:]
    for _ in 0..<(count(6) + count(8) + count(10)) {
      guard let (owner, next) = name(in: message, at: offset), next + 10 <= message.count
      else { break }
      let type = count(next)
      let length = count(next + 8)
      let data = next + 10
      guard data + length <= message.count else { break }
      if type == 1, length == 4 {
        found[owner] = message[data..<data + 4].map(String.init).joined(separator: ".")
      }
      offset = data + length
    }
    return found
  }

  /// The name at `offset` (following compression pointers) and the offset after it in place.
  private static func name(in message: [UInt8], at start: Int) -> (String, Int)? {
    var labels: [String] = []
    var offset = start
    var end: Int?
    // A pointer goes back; a bound on the jumps stops a loop in a hostile message.
    for _ in 0..<64 {
      guard offset < message.count else { return nil }
      let length = Int(message[offset])
      if length == 0 {
        return (labels.joined(separator: ".").lowercased(), end ?? offset + 1)
      }
      if length & 0xC0 == 0xC0 {
        guard offset + 1 < message.count else { return nil }
        if end == nil { end = offset + 2 }
        offset = (length & 0x3F) << 8 | Int(message[offset + 1])
        continue
      }
      guard offset + 1 + length <= message.count else { return nil }
      labels.append(String(decoding: message[offset + 1..<offset + 1 + length], as: UTF8.self))
      offset += 1 + length
    }
    return nil
  }
}
