import IngestCore

/// What one output of a run took: its counters, its failure, and whether it delivered enough.
public struct OutputSummary: Sendable {
  /// The output's place among `--to` options, from 1.
  public var index: Int
  /// The output as `--to` named it, secrets left out.
  public var description: String
  /// The output's pipeline counters at the end (its ring, drops and ladder).
  public var snapshot: PipelineSnapshot
  /// The sink failure that stopped this output, if any.
  public var sinkError: SinkError?
  /// What the output itself took, when it knows better than the units handed to it (a file:
  /// what reached the disk); see `sentBytes`.
  public var acceptedBytes: Int64?
  /// Units the sink took but that did not reach the destination (`OutputSink.unstoredUnits`):
  /// taken off `snapshot.sent`, so they are in its `inFlight` (undelivered).
  public var lostUnits = 0
  /// Video frames the source skipped (a frame-rate cut at the encoder): counted as frames
  /// the output did not deliver, against `minimumDeliveredFraction`.
  public var skippedSourceVideoFrames = 0
  /// What the output warned about during the run (a latency too short for the path).
  public var warnings: [String] = []
  /// The sink's own figures for the summary (`OutputSink.summaryLine`), when it has any.
  public var sinkLine: String?
  /// The same for the JSON summary (`OutputSink.summaryFields`), its `link` member.
  public var sinkFields: JSONObject?
  /// The audio the output carried. RTMP with one of two tracks counts the other as dropped
  /// (`notCarried`); other outputs leave a track not carried out of their program.
  public var audio: OutputAudio = .none
  /// A mix: the frames its limiter turned down (the gains summed above the ceiling there).
  public var mixLimitedFrames: Int?
  /// A mix: the mixed frames encoded, and the clock resets found in each input.
  public var mixFigures: (frames: Int, appResets: Int, micResets: Int)?
  /// Tier changes of this output's ladder.
  public var tierChanges: Int
  /// The smallest share of the appended video frames (of all samples when there is no video)
  /// the output must have accepted, 0...1.
  public var minimumDeliveredFraction = ReplayOptions.defaultMinimumDeliveredFraction

  public init(index: Int, description: String, snapshot: PipelineSnapshot, tierChanges: Int) {
    self.index = index
    self.description = description
    self.snapshot = snapshot
    self.tierChanges = tierChanges
  }

  /// Bytes the output accepted.
  public var sentBytes: Int64 { acceptedBytes ?? snapshot.sentBytes }

  /// Why units were left in the ring at the end, when some were; `readError` is the run's.
  public func undeliveredCause(readError: DumpError?) -> String? {
    guard snapshot.inFlight > 0 else { return nil }
    switch sinkError {
    case .diskFull?: return "the disk is full"
    case .connect?, .publishRefused?, .authentication?, .certificate?, .timeout?:
      return "the connection failed"
    case .write?, .unsupported?: return "the output failed"
    case nil:
      if lostUnits >= snapshot.inFlight {
        return "the output took them but could not deliver them (too late on the link)"
      }
      return readError == nil
        ? "the drain timed out before the output took them" : "reading the dump failed"
    }
  }

  /// What the producer sent that the pipeline had to mend or refuse, one line each: ADTS
  /// headers removed, samples refused as too large (their size and the limit).
  public var producerNotes: [String] {
    var notes: [String] = []
    for kind in SampleKind.allCases where snapshot.adtsRemoved[kind] > 0 {
      notes.append(
        "\(kind): samples carry ADTS headers, removed (\(snapshot.adtsRemoved[kind]) samples)")
    }
    for kind in SampleKind.allCases where snapshot.drops[kind, .tooLarge] > 0 {
      notes.append(
        "\(kind): \(snapshot.drops[kind, .tooLarge]) samples refused as too large (largest "
          + "\(snapshot.largestRefusedSample) bytes, limit \(snapshot.maximumSampleBytes) bytes; "
          + "--budget raises the limit up to the format's \(SampleSizeLimit.format))")
    }
    return notes
  }

  /// Whether the output did not fail and accepted at least `minimumDeliveredFraction`.
  public var succeeded: Bool { sinkError == nil && shortfall == nil }

  /// Why the output did not take enough of the stream, as one line; `nil` when it did.
  public var shortfall: String? {
    let video = Int(SampleKind.video.rawValue)
    // Video the input refused before the pipeline (a track left out, corrupt records) is
    // video the output did not deliver: a run whose video was all refused did not succeed.
    let videoLost = snapshot.lost[.video]
    let hasVideo = snapshot.appended[video] + videoLost > 0
    let appended =
      hasVideo
      ? snapshot.appended[video] + videoLost + skippedSourceVideoFrames
      : snapshot.totalAppended + snapshot.lost.total
    guard appended > 0 else { return nil }
    let sent = hasVideo ? snapshot.sent[video] : snapshot.totalSent
    let what =
      hasVideo ? (skippedSourceVideoFrames > 0 ? "source video frames" : "video frames") : "samples"
    if sentBytes == 0 || sent == 0 {
      let cause =
        !hasVideo
        ? ""
        : videoLost == appended
          ? " (every video sample was refused by the reader)"
          : snapshot.drops[.video, .awaitingKeyframe] > 0 && snapshot.sent[video] == 0
            ? " (no video keyframe reached the output)" : ""
      return "the output accepted nothing: 0 of \(appended) \(what) sent" + cause
    }
    let fraction = Double(sent) / Double(appended)
    guard fraction < minimumDeliveredFraction else { return nil }
    let percent = { (value: Double) in JSONObject.fixed(value * 100, decimals: 0) }
    return "the output accepted only \(sent) of \(appended) \(what) (\(percent(fraction))%, "
      + "below the minimum of \(percent(minimumDeliveredFraction))%, --min-delivered)"
  }

  /// Writes the output's own figures into `object`; `readError` is the run's.
  public func fill(_ object: inout JSONObject, readError: DumpError?) {
    var sent = JSONObject()
    for kind in SampleKind.allCases {
      sent.add(kind.description, snapshot.sent[Int(kind.rawValue)])
    }
    object.add("sent", sent)
    object.add("sent_bytes", sentBytes)
    object.add("dropped", snapshot.drops.total)
    object.add("drops", StatusReporter.dropObject(snapshot.drops))
    object.add("undelivered", snapshot.inFlight)
    if lostUnits > 0 { object.add("lost", lostUnits) }
    if snapshot.lost.total > 0 {
      var refused = JSONObject()
      for kind in SampleKind.allCases where snapshot.lost[kind] > 0 {
        refused.add(kind.description, snapshot.lost[kind])
      }
      object.add("refused_by_reader", refused)
    }
    if snapshot.adtsRemoved.total > 0 {
      var removed = JSONObject()
      for kind in SampleKind.allCases where snapshot.adtsRemoved[kind] > 0 {
        removed.add(kind.description, snapshot.adtsRemoved[kind])
      }
      object.add("adts_removed", removed)
    }
    if snapshot.drops.total(.tooLarge) > 0 {
      object.add("largest_refused_sample", snapshot.largestRefusedSample)
      object.add("max_sample_bytes", snapshot.maximumSampleBytes)
    }
    if skippedSourceVideoFrames > 0 {
      object.add("source_skipped_video", skippedSourceVideoFrames)
    }
    if !warnings.isEmpty { object.add("warnings", warnings) }
    if let sinkFields { object.add("link", sinkFields) }
    if let cause = undeliveredCause(readError: readError) {
      object.add("undelivered_cause", cause)
    }
    if audio != .none { object.add("audio", audio.name) }
    switch audio {
    case .mix(let gains), .encoderMix(let gains): object.add("mix_gains", gains.description)
    case .none, .track, .both: break
    }
    if case .encoderMix = audio { object.add("mixed_by", "encoder") }
    if let mixLimitedFrames { object.add("mix_limited_frames", mixLimitedFrames) }
    if let mixFigures {
      object.add("mix_frames", mixFigures.frames)
      var resets = JSONObject()
      resets.add("app", mixFigures.appResets)
      resets.add("mic", mixFigures.micResets)
      object.add("mix_clock_resets", resets)
    }
    object.add("tier_changes", tierChanges)
    object.add("final_tier", snapshot.tier.rawValue)
    if let sinkError { object.add("sink_error", sinkError.description) }
  }
}
