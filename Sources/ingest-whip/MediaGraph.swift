import IngestCore

/// The GStreamer pipeline `ingest-whip` runs, as `gst_parse_launch` text: the access units from
/// standard input into webrtcbin, H.264 or HEVC packetized as they are, AAC decoded and
/// re-encoded as Opus (WebRTC has no AAC).
struct MediaGraph {
  var video: VideoFormat
  var audio: AACFormat?

  /// The RTP payload types of the offer (dynamic range; the answer may renumber them).
  static let videoPayloadType = 96
  static let audioPayloadType = 111

  /// The transport-wide sequence number's header extension (transport-cc): its URI and the id
  /// the offer gives it. Added to each payloader (`WebRTCSession`), not by caps after it: a
  /// capsfilter between the video payloader and webrtcbin hid the payloader from the lookup
  /// that turns NACK and retransmission on for its transceiver.
  static let transportCCURI =
    "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"
  static let transportCCExtensionID = 3

  /// The codec's name in SDP (`a=rtpmap`) and in messages.
  var videoEncodingName: String {
    switch video {
    case .h264: "H264"
    case .hevc: "H265"
    }
  }

  var videoCodecName: String {
    switch video {
    case .h264: "H.264"
    case .hevc: "HEVC"
    }
  }

  /// The launch text. The appsrcs block when full (a few seconds of media), so that a receiver
  /// that does not keep up fills standard input's pipe and the pipeline process sees it as
  /// congestion in its own ring. `config-interval=-1` repeats the parameter sets before every
  /// keyframe, so a receiver that joins or loses packets can decode from the next one;
  /// `zero-latency` sends each access unit as soon as it is packetized.
  var launchText: String {
    let parse: String
    let payloader: String
    switch video {
    case .h264:
      parse = "h264parse"
      payloader = "rtph264pay"
    case .hevc:
      parse = "h265parse"
      payloader = "rtph265pay"
    }
    var text =
      "webrtcbin name=webrtc bundle-policy=max-bundle latency=100 "
      + "appsrc name=video format=time is-live=true block=true max-bytes=\(8 << 20) "
      + "! \(parse) ! \(payloader) name=videopay config-interval=-1 aggregate-mode=zero-latency "
      + "pt=\(Self.videoPayloadType) mtu=1200 ! webrtc. "
    if audio != nil {
      text +=
        "appsrc name=audio format=time is-live=true block=true max-bytes=\(1 << 20) "
        + "! avdec_aac ! audioconvert ! audioresample ! audio/x-raw,rate=48000 "
        + "! opusenc bitrate=64000 ! rtpopuspay name=audiopay pt=\(Self.audioPayloadType) mtu=1200 ! webrtc. "
    }
    return text
  }

  /// The caps of the video appsrc: the samples as the dump has them (length-prefixed NAL units,
  /// one access unit per buffer) and the codec record.
  var videoCaps: String {
    switch video {
    case .h264(let format):
      "video/x-h264,stream-format=avc,alignment=au,codec_data=(buffer)\(Self.hex(format.avcC))"
    case .hevc(let format):
      "video/x-h265,stream-format=hvc1,alignment=au,codec_data=(buffer)\(Self.hex(format.hvcC))"
    }
  }

  /// The caps of the audio appsrc: raw AAC frames and their AudioSpecificConfig.
  var audioCaps: String? {
    guard let audio else { return nil }
    return "audio/mpeg,mpegversion=4,stream-format=raw,rate=\(audio.sampleRate),"
      + "channels=\(audio.channels),codec_data=(buffer)\(Self.hex(audio.audioSpecificConfig))"
  }

  static func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    text.reserveCapacity(bytes.count * 2)
    for byte in bytes {
      text.append(digits[Int(byte >> 4)])
      text.append(digits[Int(byte & 15)])
    }
    return String(decoding: text, as: UTF8.self)
  }

  /// The id the answer gives the transport-wide sequence number (`a=extmap:ID URI`, in any
  /// section: they are bundled), nil when it leaves the extension out (aiortc): then no
  /// feedback is to be read.
  static func transportCCExtensionID(inAnswer answer: String) -> Int? {
    for line in SDPVideoSection.lines(answer) where line.hasPrefix("a=extmap:") {
      let fields = line.dropFirst("a=extmap:".count).split(separator: " ")
      guard fields.count >= 2, fields[1] == transportCCURI,
        let id = Int(fields[0].split(separator: "/")[0]), (1...14).contains(id)
      else { continue }
      return id
    }
    return nil
  }

  /// Whether the SDP answer accepts the video codec: the video section is not rejected (port 0)
  /// and maps a payload type to the codec.
  func answerAcceptsVideo(_ answer: String) -> Bool {
    SDPVideoSection(answer).map { !$0.payloadTypes(of: videoEncodingName).isEmpty } ?? false
  }
}
