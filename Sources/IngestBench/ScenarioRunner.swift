import IngestCore
import IngestPOSIX
import IngestRuntime
import IngestSRT

/// Runs one pipeline scenario in this process and measures it: the dump (looped) paced into
/// `Pipeline.append`, the sender pumped inline (or on its thread for SRT), each append timed and
/// its heap allocations counted, memory and ring sampled for the chart.
///
/// Simulated links run on a `VirtualClock`: minutes of "realtime" traffic take a fraction of a
/// second and every run is the same, while append costs are still timed on the real clock.
public enum ScenarioRunner {
  /// Runs `scenario` (not `mux`).
  public static func run(_ scenario: BenchScenario, settings: BenchSettings) throws(ReplayError)
    -> BenchResult
  {
    let plan = ScenarioPlan(scenario, settings: settings)
    let profile = try DumpProfile(
      path: settings.dumpPath, keepKeyframes: plan.burst == nil ? 0 : 32)
    var source = try LoopingDump(path: settings.dumpPath, profile: profile, burst: plan.burst)
    let streamRate = profile.transportBitsPerSecond
    var shaper = LinkShaper()
    if let fraction = plan.linkFraction {
      shaper.bitsPerSecond = Int64(Double(streamRate) * fraction)
    }
    if let stall = plan.stall {
      shaper.stallStart = TimeSpan(seconds: stall.start)
      shaper.stallDuration = TimeSpan(seconds: stall.duration)
    }
    let virtualClock = plan.virtualClock ? VirtualClock() : nil
    let clock: any PacingClock = virtualClock ?? SystemClock()
    let timer = SystemClock()

    let probe = ProcResidentProbe()
    var options = ReplayOptions(target: .null(shaper: shaper))
    options.residentProbe = probe
    let output: RunBuilder.Output
    var benchSink: BenchSink?
    if scenario == .srt {
      guard let url = settings.srtURL else { throw .usage("the srt scenario needs --srt URL") }
      let srt: SRTOptions
      do { srt = try SRTOptions(parsing: url) } catch { throw .usage("--srt: \(error)") }
      options.target = .srt(url: url)
      let sink = SRTSink(
        options: srt, sendBufferBytes: RunBuilder.srtSendBufferBytes(options.pipeline))
      output = RunBuilder.Output(sink: sink, isNetwork: true)
    } else {
      let made = BenchSink(shaper: shaper)
      benchSink = made
      output = RunBuilder.Output(sink: made, isNetwork: false)
    }
    // The lane a replay would build: the same budget plan, pipeline, control loop and reporter.
    // Only SRT blocks; the simulated links are pumped inline, deterministic on the virtual clock.
    let senders: SenderStrategy = scenario == .srt ? .threaded(timer) : .inline
    let lane = try RunBuilder(options: options, clock: clock, senders: senders)
      .lanes(for: [output], tracks: profile.tracks)[0]
    let configuration = lane.pipeline.configuration
    let pipeline = lane.pipeline
    let reporter = lane.reporter
    let sender = lane.sender
    let thread = lane.thread

    let counter = AllocationCounter()
    var histogram = LatencyHistogram()
    var trace = BenchTrace(interval: max(.milliseconds(1), plan.length / 500))
    var pacer = ReplayPacer(speed: 1)
    var sinkError: SinkError?
    var payloadBytes: Int64 = 0
    var appendTime = TimeSpan.zero
    var steadyAllocations: UInt = 0
    var steadySamples = 0
    var sendAllocations: UInt = 0
    var sentAtHalf: Int?
    var maxTier = 0
    let start = clock.now()
    let wallStart = timer.now()
    let half = plan.length / 2

    func sample(_ now: MonotonicInstant) {
      let snapshot = pipeline.snapshot()
      maxTier = max(maxTier, snapshot.tier.rawValue)
      guard trace.isDue(now) else { return }
      trace.add(
        BenchTrace.Point(
          time: (now - start).inSeconds, ledger: snapshot.ledger,
          resident: probe.residentBytes() ?? 0,
          ringFill: Double(snapshot.ringDuration) / Double(configuration.bufferTicks),
          tier: snapshot.tier.rawValue), now: now)
    }

    // The ticks (control loop, status reporter) allocate their events; what is counted is
    // the sending.
    var tickAllocations: UInt = 0
    let ticking: (() -> MonotonicInstant) -> MonotonicInstant = { tick in
      let before = counter.threadCount()
      let due = tick()
      tickAllocations &+= counter.threadCount() &- before
      return due
    }
    /// Steps the inline output, counting the pump's allocations in the second half.
    func step(counting: Bool) -> OutputDriver.Step {
      tickAllocations = 0
      let before = counter.threadCount()
      let step = lane.driver.step(clock: clock, ticking: ticking)
      if counting { sendAllocations &+= counter.threadCount() &- before &- tickAllocations }
      return step
    }

    thread?.start()
    sample(start)
    running: while try source.next() {
      var now = clock.now()
      let position =
        plan.contentSeconds != nil ? TimeSpan(nanoseconds: source.contentTime) : now - start
      if position >= plan.length { break }
      let steady = position >= half
      if steady && sentAtHalf == nil { sentAtHalf = pipeline.snapshot().totalSent }
      if plan.pacing == .realtime {
        let header = source.header
        let due = pacer.due(kind: header.kind, time: header.dts ?? header.pts, now: now)
        while now < due {
          var wake = min(due, now + .milliseconds(100))
          if let thread {
            if let error = thread.failure {
              sinkError = error
              break running
            }
          } else {
            let step = step(counting: steady)
            if case .failed(let error) = step.pump {
              sinkError = error
              break running
            }
            wake = min(wake, step.wakeAt)
          }
          sample(now)
          clock.sleep(until: wake)
          now = clock.now()
        }
      }
      let header = source.header
      let allocationsBefore = counter.threadCount()
      let began = timer.now()
      source.withPayload { payload in
        _ = pipeline.append(
          kind: header.kind, pts: header.pts, dts: header.dts, isKeyframe: header.isKeyframe,
          payload: payload, nalUnits: header.nalUnits)
      }
      let took = timer.now() - began
      let allocations = counter.threadCount() &- allocationsBefore
      histogram.record(took.nanoseconds)
      appendTime += took
      payloadBytes += Int64(header.payloadSize)
      if steady {
        steadyAllocations &+= allocations
        steadySamples += 1
      }
      if let thread {
        thread.wake()
        if let error = thread.failure {
          sinkError = error
          break
        }
      } else if case .failed(let error) = step(counting: steady).pump {
        sinkError = error
        break
      }
      sample(now)
    }
    let sentBeforeDrain = pipeline.snapshot().totalSent
    if sinkError == nil {
      if let thread {
        sinkError = thread.stop(drainingFor: .seconds(30))
      } else {
        sinkError = lane.driver.drain(
          until: clock.now() + .seconds(30), clock: clock, afterStep: sample)
      }
    } else {
      _ = thread?.stop(drainingFor: .zero)
    }
    if sinkError == nil {
      do { try sender.finish() } catch { sinkError = error }
    }
    let end = clock.now()
    lane.tick(now: end, force: true)
    sample(end)
    let snapshot = pipeline.snapshot()

    var result = BenchResult(scenario: scenario.rawValue)
    result.setup = scenario.summary
    result.clock = virtualClock == nil ? "system" : "virtual"
    result.contentSeconds = TimeSpan(nanoseconds: source.contentTime).inSeconds
    result.wallSeconds = (timer.now() - wallStart).inSeconds
    result.samples = snapshot.totalAppended
    result.streamBitsPerSecond = streamRate
    result.linkBitsPerSecond = scenario == .srt ? nil : shaper.bitsPerSecond
    result.budget = snapshot.budget
    result.overhead = pipeline.budget.overhead
    result.fixedBytes = pipeline.budget.fixedBytes
    result.peakLedger = snapshot.peakLedger
    result.peakResident = probe.peakResidentBytes()
    for kind in SampleKind.allCases {
      for reason in DropReason.allCases where snapshot.drops[kind, reason] > 0 {
        result.drops.append((kind.description, reason.description, snapshot.drops[kind, reason]))
      }
    }
    result.tierChanges = reporter.tierChanges
    result.maxTier = maxTier
    result.outageToKeyframeMilliseconds = benchSink?.keyframeAfterOutage?.inMilliseconds
    result.appendP50 = histogram.percentile(0.5)
    result.appendP99 = histogram.percentile(0.99)
    result.appendP999 = histogram.percentile(0.999)
    result.appendMax = histogram.maximum
    result.appendMean = histogram.count > 0 ? Double(histogram.total) / Double(histogram.count) : 0
    result.allocationSamples = steadySamples
    if counter.isAvailable && steadySamples > 0 {
      result.allocationsPerSample = Double(steadyAllocations) / Double(steadySamples)
      let sentInHalf = sentBeforeDrain - (sentAtHalf ?? sentBeforeDrain)
      if thread == nil && sentInHalf > 0 {
        result.allocationsPerSentUnit = Double(sendAllocations) / Double(sentInHalf)
      }
    }
    result.captureMegabytesPerSecond =
      appendTime > .zero ? Double(payloadBytes) / 1e6 / appendTime.inSeconds : 0
    result.sentBytes = snapshot.sentBytes
    result.sinkError = sinkError?.description
    result.trace = trace.points
    return result
  }
}
