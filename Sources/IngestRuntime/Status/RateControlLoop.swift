import IngestCore

/// Runs a `RateController` on the output's link estimates a few times a second and turns its
/// decisions into encoder requests and `rate` status events.
///
/// Driven by `StatusReporter.tick` on the sender's thread (the thread that owns the sink), so it
/// needs no lock of its own.
public final class RateControlLoop {
  /// How often the link is read.
  public let intervalNanoseconds: Int64
  public private(set) var controller: RateController
  private var nextRead: Int64 = .min

  public init(configuration: RateController.Configuration, intervalNanoseconds: Int64 = 200_000_000)
  {
    controller = RateController(configuration: configuration)
    self.intervalNanoseconds = intervalNanoseconds
  }

  /// The congestion the memory ladder should see from the network: none while the controller
  /// can still steer the encoder; full once even keyframes only are what the link allows.
  public var ladderCongestion: Double { controller.keyframesOnly ? 1 : 0 }

  /// Reads the link when due and reports a decision through `reporter`.
  /// - Parameter pipeline: the output's pipeline, whose ring backlog counts as queue.
  func tick(now: Int64, sink: any OutputSink, pipeline: Pipeline, reporter: StatusReporter) {
    guard now >= nextRead else { return }
    nextRead = now + intervalNanoseconds
    guard var estimate = sink.linkEstimate(now: now) else { return }
    // An SRT sink holds data back rather than let libsrt's queue outgrow what the link drains
    // within the latency (an RTMP sink blocks in its socket), so a link that does not keep up
    // shows as a backlog in the ring: it is queue all the same.
    estimate.backlogMilliseconds = Double(pipeline.waitingTicks) / 90
    let before = controller
    guard let decision = controller.update(estimate) else { return }
    reporter.emitForOutput("rate", now: now) { object in
      object.add("reason", decision.reason.rawValue)
      object.add("algorithm", RateController.algorithm)
      object.add("queue_delay_ms", decision.queueDelayMilliseconds, decimals: 0)
      object.add("target_bps", decision.targetBitsPerSecond)
      object.add("frame_rate", decision.frameRate)
      object.add("keyframes_only", decision.keyframesOnly)
      object.add("link", estimate.statusObject)
    }
    // The start target differs from what the encoder runs at (its nominal rate), not from the
    // controller's own.
    if decision.targetBitsPerSecond != before.targetBitsPerSecond || decision.reason == .start {
      reporter.requestEncoder("bitrate", now: now) {
        $0.add("target_bps", decision.targetBitsPerSecond)
      }
    }
    if decision.frameRate != before.frameRate {
      reporter.requestEncoder("frameRate", now: now) { $0.add("target_fps", decision.frameRate) }
    }
    if decision.keyframesOnly != before.keyframesOnly {
      reporter.requestEncoder("keyframesOnly", now: now) {
        $0.add("enabled", decision.keyframesOnly)
      }
    }
  }
}
