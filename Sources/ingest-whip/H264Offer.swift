import IngestCore

/// An offer's H.264 payload types, one per profile the sender can make, in the order it
/// prefers them: webrtcbin offers the one profile of the caps it has seen, and the offer is
/// rewritten to list every profile the live encoder can switch to, so that the answer chooses
/// (`docs/whip.md`, "Profiles").
struct H264Offer {
  /// The payload types offered and the profile each one stands for, most preferred first.
  var payloadTypes: [(type: Int, profile: H264Profile)]
  /// The retransmission (RTX, RFC 4588) payload type offered for each H.264 one (`apt=`).
  var retransmission: [Int: Int] = [:]

  /// The profile a payload type of the offer stands for.
  func profile(of payloadType: Int) -> H264Profile? {
    payloadTypes.first { $0.type == payloadType }?.profile
  }

  /// `sdp` with its H.264 payload type replaced by one per profile of `profiles` (in that
  /// order, at `level`): the first keeps webrtcbin's number, the others take free dynamic
  /// numbers. Each copies the original's feedback lines and format parameters, less the
  /// profile and the parameter sets (those of the stream webrtcbin saw, not of the others).
  /// When webrtcbin offered retransmission (an `rtx` payload type whose `apt=` is the
  /// original), each other H.264 payload type gets one of its own: whichever the answer
  /// chooses can be sent again.
  /// Nil when the offer has no H.264 video payload type.
  static func rewriting(_ sdp: String, profiles: [H264Profile], level: UInt8)
    -> (sdp: String, offer: H264Offer)?
  {
    guard let section = SDPVideoSection(sdp), let original = section.payloadTypes(of: "H264").first,
      !profiles.isEmpty
    else { return nil }
    var used = Set(allPayloadTypes(sdp))
    var types: [(type: Int, profile: H264Profile)] = [(original, profiles[0])]
    for profile in profiles.dropFirst() {
      guard let free = (96...127).first(where: { !used.contains($0) }) else { return nil }
      used.insert(free)
      types.append((free, profile))
    }
    let originalRTX = section.payloadTypes(of: "RTX").first {
      section.parameters[$0]?["apt"] == String(original)
    }
    var retransmission: [Int: Int] = [:]
    if let originalRTX {
      retransmission[original] = originalRTX
      for (type, _) in types.dropFirst() {
        guard let free = (96...127).first(where: { !used.contains($0) }) else { return nil }
        used.insert(free)
        retransmission[type] = free
      }
    }
    let addedRTX = types.dropFirst().compactMap { type in
      retransmission[type.type].map { (rtx: $0, apt: type.type) }
    }
    var parameters = (section.parameters[original] ?? [:]).filter {
      $0.key != "profile-level-id" && !$0.key.hasPrefix("sprop-")
    }
    parameters["level-asymmetry-allowed"] = "1"
    parameters["packetization-mode"] = parameters["packetization-mode"] ?? "1"
    let fixed = parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }

    var output: [String] = []
    var inVideo = false
    var feedback: [Substring] = []
    var rewritten = false
    for line in SDPVideoSection.lines(sdp) {
      if line.hasPrefix("m=") {
        let fields = line.split(separator: " ", omittingEmptySubsequences: false)
        inVideo = fields.first == "m=video" && !rewritten
        if inVideo {
          rewritten = true
          let formats = fields.dropFirst(3).flatMap { field -> [String] in
            if Int(field) == original { return types.map { String($0.type) } }
            if let rtx = originalRTX, Int(field) == rtx {
              return [String(field)] + addedRTX.map { String($0.rtx) }
            }
            return [String(field)]
          }
          output.append((fields.prefix(3).map(String.init) + formats).joined(separator: " "))
          continue
        }
      }
      guard inVideo else {
        output.append(String(line))
        continue
      }
      if let (type, _) = SDPVideoSection.attribute("a=rtcp-fb:", line), type == original {
        feedback.append(line.drop { $0 != " " }.dropFirst())
        continue
      }
      if let (type, _) = SDPVideoSection.attribute("a=fmtp:", line), type == original { continue }
      if let (type, _) = SDPVideoSection.attribute("a=fmtp:", line), type == originalRTX {
        // The other profiles' retransmission types follow webrtcbin's own.
        output.append(String(line))
        for (rtx, apt) in addedRTX {
          output.append("a=rtpmap:\(rtx) rtx/\(MediaTicks.perSecond)")
          output.append("a=fmtp:\(rtx) apt=\(apt)")
        }
        continue
      }
      if let (type, _) = SDPVideoSection.attribute("a=rtpmap:", line), type == original {
        // The whole set goes where the original's rtpmap was; its feedback lines follow it in
        // webrtcbin's offers, so they are gathered first.
        output.append("\u{0}H264")
        continue
      }
      output.append(String(line))
    }
    var lines: [String] = []
    for line in output {
      guard line == "\u{0}H264" else {
        lines.append(line)
        continue
      }
      for (type, profile) in types {
        lines.append("a=rtpmap:\(type) H264/\(MediaTicks.perSecond)")
        for item in feedback { lines.append("a=rtcp-fb:\(type) \(item)") }
        let id = profile.profileLevelID(level: level)
        lines.append(
          "a=fmtp:\(type) " + (fixed + ["profile-level-id=\(id)"]).joined(separator: ";"))
      }
    }
    return (
      lines.joined(separator: "\r\n"),
      H264Offer(payloadTypes: types, retransmission: retransmission)
    )
  }

  /// Every payload type named on an `m=` line of `sdp`.
  private static func allPayloadTypes(_ sdp: String) -> [Int] {
    SDPVideoSection.lines(sdp).filter { $0.hasPrefix("m=") }.flatMap {
      $0.split(separator: " ").dropFirst(3).compactMap { Int($0) }
    }
  }
}
