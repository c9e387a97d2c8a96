extension DegradationLadder {
  /// What the encoder is asked for when the tier goes from `from` to `to`: one request for each
  /// tier crossed, lowest tier first (up: lower bitrate, lower frame rate, mic off, keyframes
  /// only; down: the same undone).
  ///
  /// - Parameters:
  ///   - reducedBitsPerSecond: the bitrate asked for on entering `reducedBitrate`.
  ///   - nominalFrameRate: the encoder's own frame rate; half of it is asked for on entering
  ///     `reducedFrameRate`, and it is restored on leaving.
  ///   - rateControlled: a rate controller steers bitrate and frame rate from the link, so the
  ///     ladder leaves both to it and asks only for the mic and keyframes only.
  public static func encoderRequests(
    from: Tier, to: Tier, reducedBitsPerSecond: Int, nominalFrameRate: Int, rateControlled: Bool
  ) -> [EncoderRequest] {
    let up = to > from
    var requests: [EncoderRequest] = []
    for tier in Tier.allCases where tier != .normal {
      guard up ? (from < tier && tier <= to) : (to < tier && tier <= from) else { continue }
      switch tier {
      case .reducedBitrate where !rateControlled:
        requests.append(.bitrate(up ? reducedBitsPerSecond : nil))
      case .reducedFrameRate where !rateControlled:
        requests.append(.frameRate(Double(up ? max(1, nominalFrameRate / 2) : nominalFrameRate)))
      case .noMic: requests.append(.mic(!up))
      case .keyframesOnly: requests.append(.keyframesOnly(up))
      case .normal, .reducedBitrate, .reducedFrameRate: break
      }
    }
    return requests
  }
}
