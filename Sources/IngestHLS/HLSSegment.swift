import IngestCore

/// One complete media segment of an HLS recording: what the journal records and the playlist lists.
public struct HLSSegment: Equatable, Sendable {
  /// The file name inside the recording directory, e.g. `seg00042.ts`.
  public var name: String
  /// Duration in 90 kHz ticks.
  public var duration: Int64
  /// Size of the file in bytes.
  public var bytes: Int64
  /// An `EXT-X-DISCONTINUITY` goes before this segment (clock reset, or the join of two runs).
  public var discontinuity: Bool
  /// Wall-clock time of the segment's first sample, milliseconds since 1970-01-01 UTC.
  public var programDateTime: Int64
  /// The initialization section an fMP4 segment needs (`EXT-X-MAP`), e.g. `init00042.mp4`; nil
  /// for a TS segment.
  public var map: String?

  public init(
    name: String, duration: Int64, bytes: Int64, discontinuity: Bool, programDateTime: Int64,
    map: String? = nil
  ) {
    self.name = name
    self.duration = duration
    self.bytes = bytes
    self.discontinuity = discontinuity
    self.programDateTime = programDateTime
    self.map = map
  }

  /// The file name of segment number `index`: `seg00042.ts` or `seg00042.m4s` (more digits
  /// past 99999).
  public static func fileName(index: Int, container: HLSContainer = .transportStream) -> String {
    "seg" + paddedNumber(index) + container.segmentExtension
  }

  /// The file name of the initialization section first used by segment number `index`:
  /// `init00042.mp4`. Named after that segment, so a map written by a later run (or after a
  /// format change) never replaces one that earlier segments refer to.
  public static func mapFileName(index: Int) -> String { "init" + paddedNumber(index) + ".mp4" }

  private static func paddedNumber(_ index: Int) -> String {
    let digits = String(index)
    return String(repeating: "0", count: max(0, 5 - digits.count)) + digits
  }

  /// The number in a segment file name (`seg00042.ts`, `seg00042.m4s`, or either with `.part`),
  /// or nil for any other name.
  public static func index(ofFileName name: String) -> Int? {
    var rest = Substring(name)
    if rest.hasSuffix(".part") { rest = rest.dropLast(5) }
    guard let container = HLSContainer.of(segmentName: String(rest)) else { return nil }
    return number(in: rest.dropLast(container.segmentExtension.count), prefix: "seg")
  }

  /// The number in an initialization section's name (`init00042.mp4`), or nil for any other
  /// name.
  public static func index(ofMapName name: String) -> Int? {
    guard name.hasSuffix(".mp4") else { return nil }
    return number(in: Substring(name).dropLast(4), prefix: "init")
  }

  private static func number(in text: Substring, prefix: String) -> Int? {
    guard text.hasPrefix(prefix) else { return nil }
    let rest = text.dropFirst(prefix.count)
    guard !rest.isEmpty, rest.count <= 9, rest.allSatisfy({ $0.isASCII && $0.isNumber }) else {
      return nil
    }
    return Int(rest)
  }

  /// `ticks` of 90 kHz as seconds with `decimals` places (exact integer rounding, no Double).
  public static func seconds(_ ticks: Int64, decimals: Int) -> String {
    var scale: Int64 = 1
    for _ in 0..<decimals { scale *= 10 }
    let clamped = max(0, ticks)
    let units = (clamped * scale + MediaTicks.perSecond / 2) / MediaTicks.perSecond
    var text = String(units / scale)
    if decimals > 0 {
      let fraction = String(units % scale)
      text += "." + String(repeating: "0", count: decimals - fraction.count) + fraction
    }
    return text
  }

  /// Parses a non-negative decimal number of seconds into 90 kHz ticks (rounded to nearest), or nil.
  public static func ticks(seconds text: Substring) -> Int64? {
    let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
    guard let wholeText = parts.first, !wholeText.isEmpty, wholeText.count <= 9,
      wholeText.allSatisfy({ $0.isASCII && $0.isNumber }), let whole = Int64(wholeText)
    else { return nil }
    var numerator: Int64 = 0
    var denominator: Int64 = 1
    if parts.count == 2 {
      let fraction = parts[1]
      guard !fraction.isEmpty, fraction.count <= 9,
        fraction.allSatisfy({ $0.isASCII && $0.isNumber })
      else { return nil }
      numerator = Int64(fraction) ?? 0
      for _ in 0..<fraction.count { denominator *= 10 }
    }
    return whole * MediaTicks.perSecond
      + (numerator * MediaTicks.perSecond * 2 + denominator) / (2 * denominator)
  }

  /// The smallest whole number of seconds not below `ticks`.
  public static func wholeSecondsRoundedUp(_ ticks: Int64) -> Int {
    Int((max(0, ticks) + MediaTicks.perSecond - 1) / MediaTicks.perSecond)
  }
}
