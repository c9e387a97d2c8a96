import IngestCore

/// Something that watches an output and is ticked after each pump of its sender: the output's
/// `ControlLoop` (memory, ladder, rate controller) and its status reporter.
public protocol OutputTicker: AnyObject {
  /// Does what is due at `now`; `force` does the periodic work even if it is not due (the end
  /// of a run).
  func tick(now: MonotonicInstant, force: Bool)
  /// When the ticker next has something to do, on the pipeline clock.
  var nextTickDue: MonotonicInstant { get }
}

extension ControlLoop: OutputTicker {}

/// Drives one output: pumps its sender, ticks what watches it, and says when to come back. The
/// one loop body behind every way an output is sent: the replay loop's outputs without a thread
/// and the benchmark's (`step`), an output's own thread (`SenderThread`) and the embedding
/// engine's, and the end of a run (`drain`).
///
/// Not thread-safe: one thread steps a driver at a time (the sender's rule: the sink is only
/// ever called from one thread).
public final class OutputDriver {
  /// What one pass did and when the next is due.
  public struct Step: Equatable, Sendable {
    /// What the pump did.
    public var pump: Sender.PumpResult
    /// When to come back: the sink's retry time when it is blocked, a ticker's next deadline,
    /// at most `longestWait` after the pass.
    public var wakeAt: MonotonicInstant
  }

  public let sender: Sender
  private let tickers: [any OutputTicker]
  /// How long a pass lets the next one wait at most: a driver that is not woken by data still
  /// ticks this often.
  public let longestWait: TimeSpan

  /// - Parameters:
  ///   - tickers: ticked after each pump, in this order (the control loop before the status
  ///     reporter, which reports what it read).
  ///   - longestWait: the longest a step lets the caller wait before the next one.
  public init(
    sender: Sender, tickers: [any OutputTicker],
    longestWait: TimeSpan = .seconds(1)
  ) {
    self.sender = sender
    self.tickers = tickers
    self.longestWait = longestWait
  }

  /// One pass: pumps at `clock`'s time, then ticks at the time after the pump (a connect or a
  /// send may have blocked for seconds). `ticking` wraps the ticks (a thread that shares them
  /// with another passes its lock here).
  public func step(
    clock: any PipelineClock, ticking: ((() -> MonotonicInstant) -> MonotonicInstant)? = nil
  ) -> Step {
    let pump = sender.pump(now: clock.now())
    let now = clock.now()
    // Not `ticking.map { … }`: that closure's context was allocated on every step (one a
    // unit sent, in the benchmark's sender figure); a closure passed straight to a
    // non-escaping parameter is not.
    var wakeAt: MonotonicInstant
    if let ticking {
      wakeAt = ticking { self.tick(now: now) }
    } else {
      wakeAt = tick(now: now)
    }
    wakeAt = min(wakeAt, now + longestWait)
    if case .blocked(let until) = pump { wakeAt = min(wakeAt, until) }
    return Step(pump: pump, wakeAt: wakeAt)
  }

  /// Whether anything watches the output.
  public var hasTickers: Bool { !tickers.isEmpty }

  /// Ticks every ticker at `now`.
  /// - Returns: when the next of them is due.
  @discardableResult
  public func tick(now: MonotonicInstant, force: Bool = false) -> MonotonicInstant {
    var due = MonotonicInstant.distantFuture
    for ticker in tickers {
      ticker.tick(now: now, force: force)
      due = min(due, ticker.nextTickDue)
    }
    return due
  }

  /// Whether a run that is ending stops sending after `step`, taken at `now`: the ring is
  /// empty, the drain's `deadline` passed, or the output never answered during the whole run
  /// (it is not waited for at its end).
  public func drainEnds(after step: Step, now: MonotonicInstant, deadline: MonotonicInstant) -> Bool
  {
    switch step.pump {
    case .failed, .idle: true
    case .blocked: now >= deadline || !sender.hasConnected
    }
  }

  /// Sends what the ring holds on this thread, stepping and sleeping on `clock` until the ring
  /// is empty or `deadline` passes (`drainEnds`).
  /// - Parameter afterStep: called with the time after each step (the benchmark samples its
  ///   trace there).
  /// - Returns: the fatal sink error, if the sender failed.
  public func drain(
    until deadline: MonotonicInstant, clock: any PacingClock,
    afterStep: (MonotonicInstant) -> Void = { _ in }
  ) -> SinkError? {
    while true {
      let step = step(clock: clock)
      let now = clock.now()
      afterStep(now)
      if case .failed(let error) = step.pump { return error }
      if drainEnds(after: step, now: now, deadline: deadline) { return nil }
      clock.sleep(until: min(step.wakeAt, deadline))
    }
  }
}
