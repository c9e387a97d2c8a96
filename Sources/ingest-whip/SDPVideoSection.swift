import IngestCore

/// The video media section of an SDP text, as far as codec negotiation needs it: its payload
/// types in their order of preference (`m=video … 96 97 98`), each one's encoding name
/// (`a=rtpmap`) and format parameters (`a=fmtp`). Nil port 0 means a rejected section.
struct SDPVideoSection: Equatable {
  /// The section's port; 0 when the answer rejects it.
  var port: Int
  /// The payload types, most preferred first.
  var payloadTypes: [Int]
  /// The encoding name (upper case, `H264`) of each payload type that has an `a=rtpmap`.
  var encodings: [Int: String] = [:]
  /// The `a=fmtp` parameters of each payload type, by name (lower case).
  var parameters: [Int: [String: String]] = [:]

  /// The first video section of `sdp`; nil when it has none.
  init?(_ sdp: String) {
    var found: SDPVideoSection.Draft?
    for line in Self.lines(sdp) {
      if line.hasPrefix("m=") {
        if found != nil { break }
        let fields = line.dropFirst(2).split(separator: " ")
        guard fields.first == "video", fields.count >= 3 else { continue }
        found = Draft(
          port: Int(fields[1]) ?? 0, payloadTypes: fields.dropFirst(3).compactMap { Int($0) })
        continue
      }
      guard found != nil else { continue }
      if let (type, value) = Self.attribute("a=rtpmap:", line) {
        let name = value.split(separator: "/").first.map { $0.uppercased() } ?? ""
        found?.encodings[type] = name
      } else if let (type, value) = Self.attribute("a=fmtp:", line) {
        var parameters: [String: String] = [:]
        for item in value.split(separator: ";") {
          let pair = item.split(separator: "=", maxSplits: 1)
          let name = String(pair[0]).trimmingSpaces().lowercased()
          parameters[name] = pair.count > 1 ? String(pair[1]).trimmingSpaces() : ""
        }
        found?.parameters[type] = parameters
      }
    }
    guard let found else { return nil }
    port = found.port
    payloadTypes = found.payloadTypes
    encodings = found.encodings
    parameters = found.parameters
  }

  private struct Draft {
    var port: Int
    var payloadTypes: [Int]
    var encodings: [Int: String] = [:]
    var parameters: [Int: [String: String]] = [:]
  }

  /// The payload types that carry `encoding` (`H264`), in the section's order; none when the
  /// section is rejected.
  func payloadTypes(of encoding: String) -> [Int] {
    guard port != 0 else { return [] }
    return payloadTypes.filter { encodings[$0] == encoding }
  }

  /// The `profile-level-id` a payload type names (RFC 6184: absent means Baseline level 1, but
  /// WebRTC stacks read it as Constrained Baseline level 3.1, as here).
  func profileLevelID(of payloadType: Int) -> H264ProfileLevelID? {
    guard let text = parameters[payloadType]?["profile-level-id"] else {
      return H264ProfileLevelID(hex: "42e01f")
    }
    return H264ProfileLevelID(hex: text)
  }

  /// SDP's lines without their ends (CRLF, which Swift sees as one Character, or LF).
  static func lines(_ sdp: String) -> [Substring] {
    sdp.split(omittingEmptySubsequences: false) { $0 == "\r\n" || $0 == "\n" || $0 == "\r" }
  }

  /// `a=rtpmap:96 H264/90000` as (96, "H264/90000") for the prefix `a=rtpmap:`.
  static func attribute(_ prefix: String, _ line: Substring) -> (Int, Substring)? {
    guard line.hasPrefix(prefix) else { return nil }
    let rest = line.dropFirst(prefix.count)
    guard let space = rest.firstIndex(of: " "), let type = Int(rest[..<space]) else { return nil }
    return (type, rest[rest.index(after: space)...])
  }
}
