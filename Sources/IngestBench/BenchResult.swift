import IngestCore

/// The figures of one pipeline scenario, as its process reports them.
public struct BenchResult: Sendable {
  public var scenario: String
  /// How the scenario was set up, in words.
  public var setup = ""
  /// "virtual" or "system".
  public var clock = "virtual"
  /// Seconds of content played and wall seconds taken.
  public var contentSeconds = 0.0
  public var wallSeconds = 0.0
  /// Samples handed to `append`.
  public var samples = 0
  /// The stream's transport bit rate and the simulated link's (nil: unlimited).
  public var streamBitsPerSecond: Int64 = 0
  public var linkBitsPerSecond: Int64?
  /// The ledger: budget, modelled overhead, fixed buffers, peak.
  public var budget = 0
  public var overhead = 0
  public var fixedBytes = 0
  public var peakLedger = 0
  /// Peak resident memory of the whole process (VmHWM), bytes.
  public var peakResident: Int?
  /// Drops as (track, reason, count), zeros left out.
  public var drops: [(track: String, reason: String, count: Int)] = []
  public var tierChanges = 0
  public var maxTier = 0
  /// Milliseconds from the end of the outage to the first video keyframe delivered.
  public var outageToKeyframeMilliseconds: Double?
  /// Cost of `Pipeline.append` per sample, nanoseconds.
  public var appendP50: Int64 = 0
  public var appendP99: Int64 = 0
  public var appendP999: Int64 = 0
  public var appendMax: Int64 = 0
  public var appendMean = 0.0
  /// Heap allocations per appended sample over the second half of the run (nil: not counted).
  public var allocationsPerSample: Double?
  /// Heap allocations per unit sent by the inline sender over the second half (nil: not counted).
  public var allocationsPerSentUnit: Double?
  /// Samples the allocation figure is over.
  public var allocationSamples = 0
  /// Encoded input through `append` per second of time spent in it, MB (10^6 bytes).
  public var captureMegabytesPerSecond = 0.0
  public var sentBytes: Int64 = 0
  public var sinkError: String?
  public var trace: [BenchTrace.Point] = []

  public init(scenario: String) { self.scenario = scenario }

  /// Total drops.
  public var droppedTotal: Int { drops.reduce(0) { $0 + $1.count } }

  /// The result as JSON.
  public var json: JSONObject {
    var object = JSONObject()
    object.add("scenario", scenario)
    object.add("setup", setup)
    object.add("clock", clock)
    object.add("content_s", contentSeconds)
    object.add("wall_s", wallSeconds)
    object.add("samples", samples)
    object.add("stream_bps", streamBitsPerSecond)
    if let linkBitsPerSecond {
      object.add("link_bps", linkBitsPerSecond)
    } else {
      object.addNull("link_bps")
    }
    object.add("budget", budget)
    object.add("overhead", overhead)
    object.add("ledger_fixed", fixedBytes)
    object.add("peak_ledger", peakLedger)
    if let peakResident {
      object.add("peak_resident", peakResident)
    } else {
      object.addNull("peak_resident")
    }
    var dropObject = JSONObject()
    var byTrack: [String: JSONObject] = [:]
    var order: [String] = []
    for drop in drops {
      if byTrack[drop.track] == nil { order.append(drop.track) }
      byTrack[drop.track, default: JSONObject()].add(drop.reason, drop.count)
    }
    for track in order { dropObject.add(track, byTrack[track]!) }
    object.add("drops", dropObject)
    object.add("dropped", droppedTotal)
    object.add("tier_changes", tierChanges)
    object.add("max_tier", maxTier)
    if let outageToKeyframeMilliseconds {
      object.add("outage_to_keyframe_ms", outageToKeyframeMilliseconds, decimals: 1)
    } else {
      object.addNull("outage_to_keyframe_ms")
    }
    var append = JSONObject()
    append.add("p50", appendP50)
    append.add("p99", appendP99)
    append.add("p99_9", appendP999)
    append.add("max", appendMax)
    append.add("mean", appendMean, decimals: 1)
    object.add("append_ns", append)
    if let allocationsPerSample {
      object.add("allocs_per_sample", allocationsPerSample, decimals: 4)
    } else {
      object.addNull("allocs_per_sample")
    }
    if let allocationsPerSentUnit {
      object.add("allocs_per_sent_unit", allocationsPerSentUnit, decimals: 4)
    } else {
      object.addNull("allocs_per_sent_unit")
    }
    object.add("alloc_samples", allocationSamples)
    object.add("capture_mb_s", captureMegabytesPerSecond, decimals: 1)
    object.add("sent_bytes", sentBytes)
    if let sinkError { object.add("sink_error", sinkError) }
    object.add(
      "trace",
      trace.map { point in
        var item = JSONObject()
        item.add("t", point.time)
        item.add("ledger", point.ledger)
        item.add("resident", point.resident)
        item.add("ring_fill", point.ringFill)
        item.add("tier", point.tier)
        return item
      })
    return object
  }

  /// Reads a result back from its JSON.
  public init?(json: JSONValue) {
    guard let scenario = json["scenario"]?.string else { return nil }
    self.scenario = scenario
    setup = json["setup"]?.string ?? ""
    clock = json["clock"]?.string ?? ""
    contentSeconds = json["content_s"]?.double ?? 0
    wallSeconds = json["wall_s"]?.double ?? 0
    samples = json["samples"]?.int ?? 0
    streamBitsPerSecond = Int64(json["stream_bps"]?.int ?? 0)
    linkBitsPerSecond = json["link_bps"]?.int.map(Int64.init)
    budget = json["budget"]?.int ?? 0
    overhead = json["overhead"]?.int ?? 0
    fixedBytes = json["ledger_fixed"]?.int ?? 0
    peakLedger = json["peak_ledger"]?.int ?? 0
    peakResident = json["peak_resident"]?.int
    for (track, reasons) in json["drops"]?.members ?? [] {
      for (reason, count) in reasons.members ?? [] {
        drops.append((track, reason, count.int ?? 0))
      }
    }
    tierChanges = json["tier_changes"]?.int ?? 0
    maxTier = json["max_tier"]?.int ?? 0
    outageToKeyframeMilliseconds = json["outage_to_keyframe_ms"]?.double
    let append = json["append_ns"]
    appendP50 = Int64(append?["p50"]?.int ?? 0)
    appendP99 = Int64(append?["p99"]?.int ?? 0)
    appendP999 = Int64(append?["p99_9"]?.int ?? 0)
    appendMax = Int64(append?["max"]?.int ?? 0)
    appendMean = append?["mean"]?.double ?? 0
    allocationsPerSample = json["allocs_per_sample"]?.double
    allocationsPerSentUnit = json["allocs_per_sent_unit"]?.double
    allocationSamples = json["alloc_samples"]?.int ?? 0
    captureMegabytesPerSecond = json["capture_mb_s"]?.double ?? 0
    sentBytes = Int64(json["sent_bytes"]?.int ?? 0)
    sinkError = json["sink_error"]?.string
    trace = (json["trace"]?.array ?? []).map { item in
      BenchTrace.Point(
        time: item["t"]?.double ?? 0, ledger: item["ledger"]?.int ?? 0,
        resident: item["resident"]?.int ?? 0, ringFill: item["ring_fill"]?.double ?? 0,
        tier: item["tier"]?.int ?? 0)
    }
  }
}
