import IngestCore

/// The sizes of the two queues between the capture thread and the mix's own thread, fixed when
/// the run starts and reserved in the ledger with the mix (`AudioMixStage.ledgerBytes`).
///
/// The input queue holds one second of both audio tracks at AAC's largest frame (6144 bits per
/// channel), so a mic that delivers a second in one burst fits whole, and the video times
/// (no payload) of that second; the output queue a quarter of a second of mixed frames, which
/// the capture thread takes at every iteration.
public struct AudioMixHandOff: Equatable, Sendable {
  /// Bytes of the input arena: the app and mic AAC frames waiting to be mixed.
  public let inputArenaBytes: Int
  /// Records of the input queue: audio frames, video times, format changes.
  public let inputRecords: Int
  /// Bytes of the output arena: mixed AAC frames waiting for `Pipeline.append`.
  public let outputArenaBytes: Int
  /// Records of the output queue.
  public let outputRecords: Int

  /// What one record of either queue may take, for the ledger: the queues check at start that
  /// theirs fit.
  public static let recordBytes = 64
  /// The largest AAC frame, per channel (ISO/IEC 14496-3: 6144 bits).
  public static let largestFrameBytesPerChannel = 768
  /// Video frames a second that the input queue leaves room for, beside the audio.
  static let videoFramesPerSecond = 120

  /// The queues for a mix of `app` and `mic` (the mixed track at `app`'s rate and channels).
  public init(app: AACFormat, mic: AACFormat) {
    func framesPerSecond(_ format: AACFormat) -> Int { (format.sampleRate + 1023) / 1024 }
    let largest = Self.largestFrameBytesPerChannel
    inputArenaBytes =
      framesPerSecond(app) * largest * app.channels + framesPerSecond(mic) * largest
      * mic.channels
    inputRecords = framesPerSecond(app) + framesPerSecond(mic) + Self.videoFramesPerSecond
    outputRecords = (framesPerSecond(app) + 3) / 4
    outputArenaBytes = outputRecords * largest * app.channels
  }

  /// Queues of the sizes given (a test's small ones).
  public init(inputArenaBytes: Int, inputRecords: Int, outputArenaBytes: Int, outputRecords: Int) {
    self.inputArenaBytes = inputArenaBytes
    self.inputRecords = inputRecords
    self.outputArenaBytes = outputArenaBytes
    self.outputRecords = outputRecords
  }

  /// Everything both queues hold: arenas and record tables.
  public var bytes: Int {
    inputArenaBytes + outputArenaBytes + (inputRecords + outputRecords) * Self.recordBytes
  }
}
