import IngestCore

/// The tracks one RTMP connection carries and how each is tagged in its FLV: the video in a
/// legacy AVC tag (H.264) or an E-RTMP extended one (HEVC), the first audio track in legacy AAC
/// tags and a second one, when asked for, in E-RTMP v2 multitrack tags as track 1.
struct RTMPTracks: Sendable {
  /// One audio track and its place in the FLV.
  struct Audio: Sendable, Equatable {
    var kind: SampleKind
    var format: AACFormat
    /// Nil for the legacy (default) track, the multitrack track id otherwise.
    var trackID: UInt8?
  }

  /// The video format, or nil without video.
  var video: VideoFormat?
  /// The audio tracks carried, in tag order.
  var audio: [Audio]

  /// - Parameters:
  ///   - tracks: the output's program.
  ///   - kinds: the audio kinds the sink was asked to carry, the default track first; those
  ///     the program lacks are left out.
  init(tracks: TrackFormats, audio kinds: [SampleKind]) {
    video = tracks.video
    audio = []
    for kind in kinds {
      guard let format = tracks.format(for: kind), case .aac(let aac) = format else { continue }
      audio.append(
        Audio(kind: kind, format: aac, trackID: audio.isEmpty ? nil : UInt8(audio.count)))
    }
  }

  /// How the video is signalled, or nil without video.
  var videoCodec: FLVVideoTagHeader.Codec? {
    switch video {
    case .h264?: .avc
    case .hevc?: .hevc
    case nil: nil
    }
  }

  /// The record a video sequence header carries (avcC, hvcC), saying 4-byte NAL length
  /// prefixes: the sink widens shorter ones before sending (`RTMPNALLengths`).
  static func configurationRecord(_ video: VideoFormat) -> [UInt8] {
    switch video {
    case .h264(var format):
      format.nalLengthSize = 4
      return format.avcC
    case .hevc(let format):
      var record = format.hvcC
      // lengthSizeMinusOne, the low two bits of byte 21.
      record[21] = record[21] & 0xFC | 3
      return record
    }
  }

  /// The audio track of `kind`, or nil when it is not carried.
  func audio(_ kind: SampleKind) -> Audio? { audio.first { $0.kind == kind } }

  /// Whether any tag of the stream is an E-RTMP one (HEVC video, a second audio track), which
  /// a server without Enhanced RTMP may drop the stream for.
  var isEnhanced: Bool { videoCodec == .hevc || audio.count > 1 }

  /// What the E-RTMP tags carry, for messages: "HEVC video (FourCC hvc1)", "a second audio
  /// track (multitrack)", or both joined.
  var enhancedDescription: String {
    var parts: [String] = []
    if videoCodec == .hevc { parts.append("HEVC video (FourCC hvc1)") }
    if audio.count > 1 { parts.append("a second audio track (multitrack)") }
    return parts.joined(separator: " and ")
  }

  /// The stream's `onMetaData`.
  var metadata: FLVMetadata {
    var metadata = FLVMetadata()
    if let codec = videoCodec, let video {
      let size: (Int, Int)
      switch video {
      case .h264(let format):
        // An SPS this parser cannot read still decodes: only the metadata lacks its size.
        let picture = format.sps.first.flatMap { H264PictureSize(sps: $0) }
        size = (picture?.width ?? 0, picture?.height ?? 0)
      case .hevc(let format): size = (format.sequence.width, format.sequence.height)
      }
      metadata.video = FLVMetadata.Video(codec: codec, width: size.0, height: size.1)
    }
    for track in audio {
      let properties = FLVMetadata.Audio(
        sampleRate: track.format.sampleRate, channels: track.format.channels)
      if let id = track.trackID {
        metadata.audioTracks.append(FLVMetadata.Track(id: id, audio: properties))
      } else {
        metadata.audio = properties
      }
    }
    return metadata
  }
}
