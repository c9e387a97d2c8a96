import IngestCore

/// One media playlist of a recording with alternate audio (`--audio both`): the video, or one
/// of the two audio tracks, each a recording of its own in a subdirectory (journal, segments,
/// playlist, recovery), listed by the multivariant playlist at the top.
///
/// ```
/// DIR/
///   index.m3u8      multivariant: EXT-X-MEDIA for app and mic, EXT-X-STREAM-INF for video
///   video/          the video's segments and media playlist (index.m3u8), no audio
///   app/            the app audio's (the default rendition)
///   mic/            the microphone's
/// ```
public enum HLSRendition: Int, CaseIterable, Sendable {
  case video
  case app
  case mic

  /// The track it carries.
  public var kind: SampleKind {
    switch self {
    case .video: .video
    case .app: .audioApp
    case .mic: .audioMic
    }
  }

  /// Its subdirectory, and the `URI` its media playlist has in the multivariant one.
  public var directoryName: String {
    switch self {
    case .video: "video"
    case .app: "app"
    case .mic: "mic"
    }
  }

  /// The rendition's `NAME` (what a player's audio menu shows).
  var displayName: String {
    switch self {
    case .video: "Video"
    case .app: "App audio"
    case .mic: "Microphone"
    }
  }

  /// The rendition of `kind`.
  public init(kind: SampleKind) {
    switch kind {
    case .video: self = .video
    case .audioApp: self = .app
    case .audioMic: self = .mic
    }
  }

  /// The renditions a recording directory holds as a set (`HLSRenditionSink`): each whose
  /// subdirectory has a journal, when `directory` has none of its own; empty otherwise.
  public static func recorded(in directory: String) -> [HLSRendition] {
    guard HLSFileSystem.size(of: HLSFileSystem.join(directory, HLSJournal.fileName)) == nil
    else { return [] }
    return allCases.filter {
      let journal = HLSFileSystem.join(
        HLSFileSystem.join(directory, $0.directoryName), HLSJournal.fileName)
      return HLSFileSystem.size(of: journal) != nil
    }
  }

  /// The `GROUP-ID` of the audio renditions.
  static let audioGroup = "audio"

  /// The multivariant playlist of a set: an audio rendition per audio track (app the default),
  /// each with its media playlist, and one variant, the video, that refers to their group.
  /// - Parameters:
  ///   - tracks: the formats of the tracks recorded (`CODECS` from them).
  ///   - playlistName: the media playlists' file name inside each subdirectory.
  ///   - bandwidth: the peak bit rate of the video and of each audio rendition so far (bits per
  ///     second): `BANDWIDTH` is the video's and the larger audio's, as a player fetches both.
  ///   - averageBandwidth: the same for the mean bit rates.
  static func multivariantPlaylist(
    tracks: TrackFormats, playlistName: String, bandwidth: [Int], averageBandwidth: [Int]
  ) -> String {
    var text = "#EXTM3U\n#EXT-X-VERSION:4\n#EXT-X-INDEPENDENT-SEGMENTS\n"
    var audioCodecs: [String] = []
    for rendition in [HLSRendition.app, .mic] {
      guard let format = tracks.format(for: rendition.kind) else { continue }
      let isDefault = rendition == .app || tracks.audioApp == nil
      text +=
        "#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"\(audioGroup)\",NAME=\"\(rendition.displayName)\""
        + ",LANGUAGE=\"und\",DEFAULT=\(isDefault ? "YES" : "NO"),AUTOSELECT=YES"
        + ",CHANNELS=\"\(channels(of: format))\""
        + ",URI=\"\(rendition.directoryName)/\(playlistName)\"\n"
      let codec = HLSCodecString.of(format)
      if !audioCodecs.contains(codec) { audioCodecs.append(codec) }
    }
    let audioPeak = max(bandwidth[HLSRendition.app.rawValue], bandwidth[HLSRendition.mic.rawValue])
    let audioMean = max(
      averageBandwidth[HLSRendition.app.rawValue], averageBandwidth[HLSRendition.mic.rawValue])
    var attributes = [
      "BANDWIDTH=\(max(bandwidth[HLSRendition.video.rawValue] + audioPeak, 1))",
      "AVERAGE-BANDWIDTH=\(max(averageBandwidth[HLSRendition.video.rawValue] + audioMean, 1))",
    ]
    var codecs = audioCodecs
    if let video = tracks.video, let format = tracks.format(for: .video) {
      codecs.insert(HLSCodecString.of(format), at: 0)
      if let size = pictureSize(of: video) {
        attributes.append("RESOLUTION=\(size.width)x\(size.height)")
      }
    }
    attributes.append("CODECS=\"\(codecs.joined(separator: ","))\"")
    if !audioCodecs.isEmpty { attributes.append("AUDIO=\"\(audioGroup)\"") }
    text += "#EXT-X-STREAM-INF:" + attributes.joined(separator: ",") + "\n"
    text += "\(HLSRendition.video.directoryName)/\(playlistName)\n"
    return text
  }

  private static func channels(of format: FormatDescription) -> Int {
    if case .aac(let aac) = format { return max(aac.channels, 1) }
    return 2
  }

  private static func pictureSize(of video: VideoFormat) -> (width: Int, height: Int)? {
    switch video {
    case .h264(let h264):
      return h264.sps.first.flatMap { H264PictureSize(sps: $0) }.map { ($0.width, $0.height) }
    case .hevc(let hevc):
      return (hevc.sequence.width, hevc.sequence.height)
    }
  }
}
