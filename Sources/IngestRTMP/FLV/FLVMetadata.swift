/// The `onMetaData` script tag that opens a publish: what the stream holds, for servers and
/// players that read it before the first media tag.
///
/// Its body is the string `onMetaData` and one ECMA array. The properties are those of the FLV
/// specification that a live stream knows (no duration or file size: both 0), with the codec
/// ids as Enhanced RTMP gives them: `videocodecid` is 7 for H.264 and, for HEVC, the FourCC
/// `hvc1` as a number (1752589105); `audiocodecid` is 10 (AAC) for the default audio track.
/// With a second audio track (E-RTMP v2 multitrack), `audioTrackIdInfoMap` holds an object per
/// track id (as a string) with that track's properties, its codec id the FourCC `mp4a` as a
/// number, as its tags say; the default track is the top-level properties.
/// libavformat's rtmp protocol sends the tag as the data message `@setDataFrame`.
struct FLVMetadata: Equatable, Sendable {
  /// The video track's properties.
  struct Video: Equatable, Sendable {
    var codec: FLVVideoTagHeader.Codec
    var width: Int
    var height: Int
  }

  /// An AAC track's properties.
  struct Audio: Equatable, Sendable {
    var sampleRate: Int
    var channels: Int
  }

  /// An audio track beside the default one, and its id in the multitrack tags.
  struct Track: Equatable, Sendable {
    var id: UInt8
    var audio: Audio
  }

  var video: Video?
  /// The default audio track (legacy tags).
  var audio: Audio?
  /// Further audio tracks (multitrack tags), in id order.
  var audioTracks: [Track] = []

  /// The script tag's body.
  var body: [UInt8] {
    var amf = AMF0Writer()
    amf.string("onMetaData")
    var count = 3  // duration, filesize, encoder
    if video != nil { count += 3 }
    if audio != nil { count += 4 }
    if !audioTracks.isEmpty { count += 1 }
    amf.ecmaArray(count: count)
    amf.name("duration")
    amf.number(0)
    if let video {
      amf.name("width")
      amf.number(Double(video.width))
      amf.name("height")
      amf.number(Double(video.height))
      amf.name("videocodecid")
      amf.number(video.codec == .hevc ? FLVFourCC.hevc.number : 7)
    }
    if let audio { Self.write(audio, codecID: 10, into: &amf) }
    if !audioTracks.isEmpty {
      amf.name("audioTrackIdInfoMap")
      amf.object()
      for track in audioTracks {
        amf.name(String(track.id))
        amf.object()
        Self.write(track.audio, codecID: FLVFourCC.aac.number, into: &amf)
        amf.end()
      }
      amf.end()
    }
    amf.name("encoder")
    amf.string("ingest")
    amf.name("filesize")
    amf.number(0)
    amf.end()
    return amf.bytes
  }

  /// An audio track's four properties.
  private static func write(_ audio: Audio, codecID: Double, into amf: inout AMF0Writer) {
    amf.name("audiocodecid")
    amf.number(codecID)
    amf.name("audiosamplerate")
    amf.number(Double(audio.sampleRate))
    amf.name("audiosamplesize")
    amf.number(16)
    amf.name("stereo")
    amf.boolean(audio.channels >= 2)
  }
}
