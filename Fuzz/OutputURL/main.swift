import IngestCore

/// Parses fuzzed `--to` values with every output parser and checks that what is printed about
/// them (redacted forms, error messages) never contains the passphrase, stream id, stream key
/// or credentials that a successful parse found.
///
/// Compiled with `Sources/IngestSinks/OutputTarget.swift`, `IngestSRT/SRTOptions*.swift` and
/// `IngestRTMP/RTMPTarget*.swift`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOutputURL(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  let text = String(decoding: UnsafeRawBufferPointer(start: data, count: size), as: UTF8.self)

  switch try? OutputTarget(parsing: text) {
  case .file(let path, let shaper)?:
    require(!path.isEmpty, "empty file path")
    require((shaper.bitsPerSecond ?? 1) > 0, "rate of zero or less")
  case .hls(let directory, let playlist, _, _)?:
    require(!directory.isEmpty && !playlist.isEmpty, "empty HLS location")
  default: break
  }
  do {
    _ = try OutputTarget(parsing: text)
  } catch {
    // The message is a fixed sentence around the quoted text: only the quoted text can hold
    // what the user wrote (the sentence's list of outputs holds " whip+https://" itself).
    checkQuoted(error.quotedText, from: text)
  }

  do {
    let options = try SRTOptions(parsing: text)
    // What is printed must not depend on the secrets: other secrets, same text.
    var other = options
    other.passphrase = options.passphrase.map { $0 == "0123456789" ? "9876543210" : "0123456789" }
    other.streamID = options.streamID.map { $0 == "other" ? "another" : "other" }
    require(other.redacted == options.redacted, "SRT secret printed: \(options.redacted)")
    require(other.description == options.description, "SRT secret in description")
    require(other.debugDescription == options.debugDescription, "SRT secret in debugDescription")
  } catch {
    checkQuoted("\(error)", from: text)
  }

  do {
    let target = try RTMPTarget(url: text)
    let printed = [
      target.description, target.debugDescription, "\(target)", String(reflecting: target),
    ]
    require(
      "\(target.scheme.rawValue)://".count <= printed[0].count && printed[0].hasSuffix("/***"),
      "RTMP redacted form: \(printed[0])")
    // Credentials live in the authority: what is printed there is the host, or "***@" and it.
    for line in printed {
      guard let scheme = line.firstRange(of: "://") else { continue }
      let authority = line[scheme.upperBound...].prefix { $0 != "/" }
      require(!authority.contains("@") || authority.hasPrefix("***@"), "RTMP authority: \(line)")
      // The key and credentials are internal: this module compiles RTMPTarget.swift itself.
      // Written here as the redacted form is, so that a key whose bytes the host and port
      // spell ("useple:44" in "useple:443") is not taken for a leak.
      let host = target.host.contains(":") ? "[\(target.host)]" : target.host
      let nonSecret =
        "\(target.scheme.rawValue)://***@\(host):\(target.port)/\(target.app)/***"
      for secret in [target.userInfo, target.streamKey].compactMap({ $0 })
      where secret.utf8.count >= 8 && !nonSecret.contains(secret) {
        require(!line.contains(secret), "RTMP secret printed: \(line)")
      }
    }

  } catch {
    checkQuoted("\(error)", from: text)
  }
  return 0
}

/// Short values appear in redacted text as ordinary words and digits ("srt", "latency").
func isPrintedAnyway(_ secret: String) -> Bool {
  // Words of the fixed messages, among them the list of outputs a non-output is told about.
  [
    "srt://", "rtmp://", "rtmps://", "whip+http://", "whip+https://", "file:PATH", "null:",
    "hls:DIR", ".m3u8 path", "- (standard output)", ".ts, .mp4 or .mov path",
    "passphrase=***", "streamid=***", "latency=", "pbkeylen=", "maxbw=",
  ].contains {
    $0.contains(secret)
  } || secret.allSatisfy { $0.isNumber || $0 == "*" || $0 == "&" || $0 == "?" || $0 == "=" }
}

/// An error message may quote a scheme, an option name or a port, but never the value of a
/// `passphrase=` or `streamid=` query item of at least eight bytes (shorter ones may be words of
/// the message itself).
func checkQuoted(_ message: String, from text: String) {
  guard let query = text.firstIndex(of: "?") else { return }
  for key in ["?passphrase=", "&passphrase=", "?streamid=", "&streamid="] {
    var search = text[query...]
    while let range = search.firstRange(of: key) {
      let value = search[range.upperBound...].prefix { $0 != "&" }
      search = search[range.upperBound...]
      let secret = String(value)
      guard secret.utf8.count >= 8, !isPrintedAnyway(secret) else { continue }
      // The rest of the URL outside this value may legitimately contain the same bytes.
      let outside = text.replacingFirst(of: key + secret)
      guard !outside.contains(secret) else { continue }
      require(!message.contains(secret), "secret of \(key) quoted in: \(message)")
    }
  }
}

extension OutputURLError {
  /// The part of the input the message quotes.
  var quotedText: String {
    switch self {
    case .unknownScheme(let text), .missingPath(let text), .badOption(let text),
      .unknownOption(let text), .unexpected(let text), .badContainer(let text),
      .badAudio(let text):
      text
    }
  }
}

extension String {
  func replacingFirst(of needle: String) -> String {
    guard let range = firstRange(of: needle) else { return self }
    return String(self[..<range.lowerBound]) + String(self[range.upperBound...])
  }
}
