import IngestCLI
import IngestCore
import IngestPOSIX
import IngestSinks

/// Checks of `ingest replay` options that depend on each other or on the output, made before
/// anything is opened, so a bad combination is a usage error (exit 2) and not a failed run.
enum ReplayOptionChecks {
  /// What a run needs under its budget beside `--overhead`: the fixed buffers (dump reader
  /// 2.2 MB, TS packager 2.1 MB, output buffers up to 0.7 MB, about 5 MB measured) and 1 MB of
  /// ring.
  static let neededAboveOverhead = 6_000_000

  /// The least `--budget` that carries a stream with `overhead`: what a run needs must fit
  /// under the ladder's first threshold (80 % of the budget), or the ladder starts dropping
  /// before the first frame, with an empty ring, and cannot stop.
  static func minimumBudgetMegabytes(overhead: Int) -> Int {
    let needed = Double(overhead + neededAboveOverhead)
    let threshold = DegradationLadder.Configuration().thresholds[0]
    return Int((needed / threshold / 1_000_000).rounded(.up))
  }

  /// Options that only an HLS output reads.
  static let hlsOnly = ["--segment", "--hls-window"]

  /// Refuses a budget that cannot hold the overhead, the fixed buffers and a ring below the
  /// ladder's first threshold.
  static func checkBudget(_ configuration: PipelineConfiguration) throws(UsageError) {
    let overhead = configuration.overheadBytes / 1_000_000
    let minimum = minimumBudgetMegabytes(overhead: configuration.overheadBytes)
    guard configuration.budgetBytes >= minimum * 1_000_000 else {
      throw UsageError(
        "--budget must be at least \(minimum) MB with --overhead \(overhead): the overhead, about "
          + "5 MB of fixed buffers and 1 MB of ring must fit under 80 % of the budget, where the "
          + "ladder starts dropping; raise --budget or lower --overhead")
    }
  }

  /// Refuses the same file or HLS directory named by two `--to` options: the two outputs would
  /// write over each other.
  static func checkDistinct(_ targets: [OutputTarget]) throws(UsageError) {
    var seen: [String] = []
    for target in targets {
      let place: String
      switch target {
      case .file(let path, _), .mp4(let path, _): place = path
      case .hls(let directory, _, _, _): place = directory
      case .null, .srt, .rtmp, .whip: continue
      }
      if seen.contains(where: { $0 == place || SameFileCheck.isSameFile($0, place) }) {
        throw UsageError("--to names \(place) twice: each output needs its own file or directory")
      }
      seen.append(place)
    }
  }

  /// Refuses HLS options given for another kind of output, where they would be ignored.
  static func checkHLSOnly(_ args: Arguments, targets: [OutputTarget]) throws(UsageError) {
    if targets.contains(where: { if case .hls = $0 { true } else { false } }) { return }
    if let name = hlsOnly.first(where: { args[$0] != nil }) {
      throw UsageError("\(name) applies to HLS outputs only (--to hls:DIR or DIR/NAME.m3u8)")
    }
  }

  /// Refuses a live window shorter than three target durations (RFC 8216 6.2.2: a segment may
  /// leave the playlist only while what remains lasts at least three target durations).
  static func checkWindow(_ window: Int) throws(UsageError) {
    guard window == 0 || window >= 3 else {
      throw UsageError(
        "--hls-window must be 0 (keep every segment) or at least 3, got \(window): a live "
          + "playlist must span three target durations (RFC 8216 6.2.2)")
    }
  }
}
