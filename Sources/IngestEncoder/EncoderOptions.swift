import IngestCore

/// Everything `ingest-encode` is told on its command line.
public struct EncoderOptions: Equatable, Sendable {
  /// The main source: video, app audio and, when it has a second audio stream, mic audio.
  public var source: EncoderSource
  /// A separate mic source (`--mic`); overrides a second audio stream of `source`.
  public var mic: EncoderSource?
  /// Ignore any mic audio (`--no-mic`).
  public var noMic = false
  /// Output picture size.
  public var width = 1280
  public var height = 720
  /// Nominal frame rate: of the test pattern and of x11grab, and the encoder's rate-control hint.
  public var fps = 30
  /// Initial video bitrate, bits per second; `{"request":"bitrate","restore":true}` returns to it.
  public var bitrate = 2_500_000
  /// Keyframe interval in frames; nil means two seconds of frames.
  public var gop: Int?
  /// B-frames between references (0: none, the live default).
  public var bFrames = 0
  /// H.264 open GOPs (`--open-gop`): keyframes after the first are I pictures with a recovery
  /// point, not IDRs, and with B-frames leading pictures that reference the GOP before follow
  /// them, as x264's `--open-gop` and many hardware encoders give. (HEVC's GOPs are open anyway.)
  public var openGOP = false
  /// The video codec (`--codec`): H.264 through libx264 or HEVC through libx265.
  public var codec = VideoCodec.h264
  /// The H.264 profile libx264 starts in (`--profile`); nil leaves it to libx264 (High).
  /// `{"request":"profile",...}` changes it at a keyframe.
  public var profile: H264Profile?
  /// The x264 or x265 preset.
  public var preset = "veryfast"
  /// AAC bitrate per audio track.
  public var audioBitrate = 128_000
  /// Mix app and mic audio into one track at these gains (`--mix-audio`); nil keeps two tracks.
  public var mixGains: AudioMixGains?
  /// Stop after this many seconds (nil: at the end of the source, or never).
  public var duration: Double?
  /// Play a file source again from the start at its end.
  public var loop = false

  public init(source: EncoderSource) { self.source = source }

  /// Frames between keyframes.
  public var keyframeInterval: Int { gop ?? 2 * fps }

  /// Parses the arguments after the program name.
  /// - Returns: nil for `--help`.
  public static func parse(_ arguments: [String]) throws(EncoderUsageError) -> EncoderOptions? {
    var positional: [String] = []
    var values: [(String, String)] = []
    var flags: Set<String> = []
    var index = 0
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      switch argument {
      case "-h", "--help": return nil
      case "--loop", "--no-mic", "--open-gop": flags.insert(argument)
      case "--mic", "--size", "--fps", "--bitrate", "--gop", "--bframes", "--codec", "--preset",
        "--audio-bitrate", "--duration", "--mix-audio", "--profile":
        guard index < arguments.count else { throw EncoderUsageError("\(argument) needs a value") }
        values.append((argument, arguments[index]))
        index += 1
      default:
        guard !argument.hasPrefix("--") || argument.count == 1 else {
          throw EncoderUsageError("unknown option \(argument)")
        }
        positional.append(argument)
      }
    }
    guard positional.count == 1 else {
      throw EncoderUsageError(
        positional.isEmpty ? "missing SOURCE" : "one SOURCE only, got \(positional.count)")
    }
    var options = EncoderOptions(source: EncoderSource(parsing: positional[0]))
    options.loop = flags.contains("--loop")
    options.noMic = flags.contains("--no-mic")
    options.openGOP = flags.contains("--open-gop")
    for (name, value) in values {
      switch name {
      case "--mic": options.mic = EncoderSource(parsing: value, mic: true)
      case "--size":
        let parts = value.split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2, parts.allSatisfy({ $0 >= 16 && $0 <= 8192 && $0 % 2 == 0 }) else {
          throw EncoderUsageError("--size wants WIDTHxHEIGHT, even numbers from 16, got \(value)")
        }
        (options.width, options.height) = (parts[0], parts[1])
      case "--fps": options.fps = try integer(name, value, 1...240)
      case "--bitrate": options.bitrate = try integer(name, value, 10_000...200_000_000)
      case "--gop": options.gop = try integer(name, value, 1...100_000)
      case "--bframes": options.bFrames = try integer(name, value, 0...16)
      case "--codec":
        guard let codec = VideoCodec(rawValue: value) else {
          throw EncoderUsageError("--codec wants h264 or hevc, got \(value)")
        }
        options.codec = codec
      case "--profile":
        guard let profile = H264Profile(rawValue: value) else {
          throw EncoderUsageError("--profile wants baseline, main or high, got \(value)")
        }
        options.profile = profile
      case "--preset": options.preset = value
      case "--audio-bitrate": options.audioBitrate = try integer(name, value, 8_000...512_000)
      case "--mix-audio":
        do { options.mixGains = try AudioMixGains(parsing: value) } catch {
          throw EncoderUsageError("--mix-audio: \(error)")
        }
      case "--duration":
        guard let seconds = Double(value), seconds > 0, seconds.isFinite else {
          throw EncoderUsageError("--duration wants seconds > 0, got \(value)")
        }
        options.duration = seconds
      default: break
      }
    }
    if options.profile != nil, options.codec != .h264 {
      throw EncoderUsageError("--profile applies to H.264 (--codec h264)")
    }
    if options.loop, !options.source.isFile {
      throw EncoderUsageError("--loop applies to a media file source only")
    }
    return options
  }

  private static func integer(_ name: String, _ value: String, _ range: ClosedRange<Int>)
    throws(EncoderUsageError) -> Int
  {
    guard let number = Int(value), range.contains(number) else {
      throw EncoderUsageError(
        "\(name) wants a whole number from \(range.lowerBound) to \(range.upperBound), got \(value)"
      )
    }
    return number
  }
}
