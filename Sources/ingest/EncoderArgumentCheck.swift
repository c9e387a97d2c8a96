import IngestCLI

/// Checks the encoder options `ingest live` passes to `ingest-encode` before the child starts,
/// with the limits `ingest-encode` applies (`EncoderOptions.parse`, which this executable does
/// not link): a mistyped value is a usage error of `ingest live` (exit 2), not an encoder that
/// died at start and a failed run (exit 1).
enum EncoderArgumentCheck {
  /// The codecs of `--codec` (`VideoCodec`).
  static let codecs = ["h264", "hevc"]
  /// The presets libx264 and libx265 both know.
  static let presets = [
    "ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower",
    "veryslow", "placebo",
  ]
  /// Whole-number options and their ranges.
  static let ranges: [(name: String, range: ClosedRange<Int>)] = [
    ("--fps", 1...240), ("--bitrate", 10_000...200_000_000), ("--gop", 1...100_000),
    ("--bframes", 0...16), ("--audio-bitrate", 8_000...512_000),
  ]

  /// Refuses a value `ingest-encode` would refuse, naming what to give instead.
  static func check(_ args: Arguments, source: String) throws(UsageError) {
    if let codec = args["--codec"], !codecs.contains(codec) {
      throw UsageError("--codec must be h264 or hevc, got '\(codec)'")
    }
    if let preset = args["--preset"], !presets.contains(preset) {
      throw UsageError(
        "--preset must be one of \(presets.joined(separator: ", ")), got '\(preset)'")
    }
    for (name, range) in ranges {
      guard let text = args[name] else { continue }
      guard let value = Int(text), range.contains(value) else {
        throw UsageError(
          "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound),"
            + " got '\(text)'")
      }
    }
    if let size = args["--size"] {
      let parts = size.split(separator: "x", omittingEmptySubsequences: false).map { Int($0) }
      let valid =
        parts.count == 2
        && parts.allSatisfy { $0.map { $0 >= 16 && $0 <= 8192 && $0 % 2 == 0 } ?? false }
      guard valid else {
        throw UsageError(
          "--size must be WIDTHxHEIGHT in even numbers from 16 to 8192, e.g. 1280x720,"
            + " got '\(size)'")
      }
    }
    if let text = args["--duration"] {
      guard let seconds = Double(text), seconds > 0, seconds.isFinite else {
        throw UsageError("--duration must be a number of seconds above 0, got '\(text)'")
      }
    }
    if args.has("--loop"), isDevice(source) {
      throw UsageError("--loop applies to a media file SOURCE only, not \(source)")
    }
  }

  /// Whether `source` is one of `ingest-encode`'s live sources rather than a media file.
  private static func isDevice(_ source: String) -> Bool {
    source == "testsrc" || source == "testsrc2" || source.hasPrefix("lavfi:")
      || source.hasPrefix("x11:")
  }
}
