/// The ICE candidates of an answer whose address is a `.local` name (a browser hiding its
/// addresses, RFC 8445's candidate attribute with an mDNS host name), by the media section
/// they are in.
struct MDNSCandidates {
  /// Each candidate as the `add-ice-candidate` signal takes it (the attribute without `a=`),
  /// its media section's index and its name.
  let candidates: [(section: UInt32, text: String, name: String)]

  init(answer: String) {
    var found: [(UInt32, String, String)] = []
    var section = -1
    for line in answer.split(whereSeparator: \.isNewline) {
      if line.hasPrefix("m=") { section += 1 }
      guard section >= 0, line.hasPrefix("a=candidate:") else { continue }
      let fields = line.dropFirst(2).split(separator: " ")
      // candidate:foundation component transport priority address port typ type ...
      guard fields.count >= 8, fields[4].lowercased().hasSuffix(".local") else { continue }
      found.append((UInt32(section), String(line.dropFirst(2)), String(fields[4]).lowercased()))
    }
    candidates = found
  }

  /// The names to resolve, once each.
  var names: [String] { Array(Set(candidates.map(\.name))).sorted() }

  /// The candidates whose name has an address there, with the address in its place.
  func resolved(_ addresses: [String: String]) -> [(section: UInt32, text: String)] {
    candidates.compactMap { candidate in
      guard let address = addresses[candidate.name] else { return nil }
      var fields = candidate.text.split(separator: " ", omittingEmptySubsequences: false)
      fields[4] = Substring(address)
      return (candidate.section, fields.joined(separator: " "))
    }
  }
}
