/// A media playlist (RFC 8216) over a growing list of segments, with a sliding window: version
/// 3 for TS segments, version 7 for fMP4 segments, whose initialization section `EXT-X-MAP`
/// names before the first segment listed and again wherever it changes.
///
/// The sequence number of a segment is its position in the recording (0 for the first), so
/// `EXT-X-MEDIA-SEQUENCE` grows by exactly the number of segments that slid out of the window, and
/// `EXT-X-DISCONTINUITY-SEQUENCE` by the number of discontinuity tags that slid out with them.
/// `EXT-X-TARGETDURATION` is the rounded-up longest segment seen so far (never below the configured
/// target), so it never decreases while the playlist is live.
public struct HLSPlaylist: Equatable, Sendable {
  /// How the playlist presents itself.
  public enum Kind: Equatable, Sendable {
    /// A live playlist showing the last `window` segments.
    case live(window: Int)
    /// Every segment, growing (`EXT-X-PLAYLIST-TYPE:EVENT`).
    case event
    /// Every segment of a finished recording (`EXT-X-PLAYLIST-TYPE:VOD`, always ended).
    case vod
  }

  public let kind: Kind
  /// The segments listed, oldest first.
  public private(set) var segments: [HLSSegment] = []
  /// The sequence number of `segments.first`.
  public private(set) var mediaSequence = 0
  /// Discontinuity tags that slid out of the window.
  public private(set) var discontinuitySequence = 0
  /// The value of `EXT-X-TARGETDURATION`.
  public private(set) var targetDuration: Int
  /// Whether `EXT-X-ENDLIST` is written.
  public var isEnded = false

  /// - Parameters:
  ///   - window: segments listed; 0 lists every segment as an EVENT playlist.
  ///   - targetDuration: the configured segment target in seconds (the floor of the tag's value).
  public init(window: Int, targetDuration: Int) {
    self.init(kind: window > 0 ? .live(window: window) : .event, targetDuration: targetDuration)
  }

  public init(kind: Kind, targetDuration: Int) {
    self.kind = kind
    self.targetDuration = max(1, targetDuration)
    if kind == .vod { isEnded = true }
  }

  /// Adds a segment at the end, sliding the window.
  public mutating func append(_ segment: HLSSegment) {
    targetDuration = max(targetDuration, HLSSegment.wholeSecondsRoundedUp(segment.duration))
    segments.append(segment)
    if case .live(let window) = kind, segments.count > window {
      let removed = segments.count - window
      discontinuitySequence += segments[..<removed].filter(\.discontinuity).count
      segments.removeFirst(removed)
      mediaSequence += removed
    }
  }

  /// The playlist text.
  public var rendered: String {
    // EXT-X-MAP without I-frame playlists needs version 6; 7 is what Apple's authoring
    // specification asks of fMP4 playlists.
    let version = segments.contains { $0.map != nil } ? 7 : 3
    // Every segment starts at a keyframe (an IDR for H.264, pictures that lead it dropped for
    // HEVC) or holds audio alone, so each decodes without the one before it.
    var text = "#EXTM3U\n#EXT-X-VERSION:\(version)\n#EXT-X-INDEPENDENT-SEGMENTS\n"
    text += "#EXT-X-TARGETDURATION:\(targetDuration)\n"
    text += "#EXT-X-MEDIA-SEQUENCE:\(mediaSequence)\n"
    if discontinuitySequence > 0 {
      text += "#EXT-X-DISCONTINUITY-SEQUENCE:\(discontinuitySequence)\n"
    }
    switch kind {
    case .event: text += "#EXT-X-PLAYLIST-TYPE:EVENT\n"
    case .vod: text += "#EXT-X-PLAYLIST-TYPE:VOD\n"
    case .live: break
    }
    var map: String?
    for segment in segments {
      if segment.discontinuity { text += "#EXT-X-DISCONTINUITY\n" }
      if let name = segment.map, name != map {
        text += "#EXT-X-MAP:URI=\"" + name + "\"\n"
        map = name
      }
      text += "#EXT-X-PROGRAM-DATE-TIME:" + HLSDateTime.format(segment.programDateTime) + "\n"
      text += "#EXTINF:" + HLSSegment.seconds(segment.duration, decimals: 3) + ",\n"
      text += segment.name + "\n"
    }
    if isEnded { text += "#EXT-X-ENDLIST\n" }
    return text
  }
}
