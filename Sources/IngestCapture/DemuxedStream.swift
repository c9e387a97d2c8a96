/// One stream of a media file as the container describes it.
public struct DemuxedStream: Hashable, Sendable {
  /// Broad media type.
  public enum MediaType: String, Hashable, Sendable {
    case video, audio, other
  }

  /// The codecs capture understands, and the name of any other.
  public enum Codec: Hashable, Sendable, CustomStringConvertible {
    case h264, hevc, aac
    case other(String)

    public var description: String {
      switch self {
      case .h264: "h264"
      case .hevc: "hevc"
      case .aac: "aac"
      case .other(let name): name
      }
    }
  }

  /// A stream time base: one tick is `numerator / denominator` seconds.
  public struct TimeBase: Hashable, Sendable {
    public var numerator: Int32
    public var denominator: Int32

    public init(numerator: Int32, denominator: Int32) {
      self.numerator = numerator
      self.denominator = denominator
    }
  }

  /// Index of the stream in the input (what `--video N` names).
  public var index: Int
  public var mediaType: MediaType
  public var codec: Codec
  /// Unit of the packets' timestamps.
  public var timeBase: TimeBase
  /// Codec configuration from the container: avcC, hvcC, Annex B parameter sets, or
  /// AudioSpecificConfig.
  public var extradata: [UInt8]
  /// Audio sample rate (0 for video).
  public var sampleRate: Int
  /// Audio channel count (0 for video).
  public var channels: Int
  /// Video size (0 for audio).
  public var width: Int
  public var height: Int

  public init(
    index: Int, mediaType: MediaType, codec: Codec, timeBase: TimeBase, extradata: [UInt8],
    sampleRate: Int, channels: Int, width: Int, height: Int
  ) {
    self.index = index
    self.mediaType = mediaType
    self.codec = codec
    self.timeBase = timeBase
    self.extradata = extradata
    self.sampleRate = sampleRate
    self.channels = channels
    self.width = width
    self.height = height
  }

  /// A short description such as "video h264 720x1280" or "audio aac 48000 Hz 2 ch".
  public var summary: String {
    switch mediaType {
    case .video: "video \(codec) \(width)x\(height)"
    case .audio: "audio \(codec) \(sampleRate) Hz \(channels) ch"
    case .other: "\(mediaType.rawValue) \(codec)"
    }
  }
}
