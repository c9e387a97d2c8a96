import IngestCore
import IngestPOSIX

/// Replays a dump into a pipeline as a capture would: samples handed to `append` at their times
/// (or as fast as possible), the sender pumped inline or on its own thread, status reported.
public final class Replayer<Source: ByteSource> {
  private var reader: DumpReader<Source>
  private let pipeline: Pipeline
  private let sender: Sender
  private let senderThread: SenderThread?
  private let clock: any PacingClock
  private let speed: ReplaySpeed
  private let reporter: StatusReporter
  /// Called about every `progressInterval` with the counters (for a terminal progress line).
  public var onProgress: ((PipelineSnapshot, Int64) -> Void)?
  public var progressInterval: Int64 = 250_000_000
  /// How long the end of the run may wait for the sink to take what the ring holds.
  public var drainTimeout: Int64 = 30_000_000_000

  /// - Parameters:
  ///   - senderThread: when given, the sender runs on it (network sinks); otherwise the replay loop
  ///     pumps it between samples, which is deterministic with a `VirtualClock`.
  public init(
    reader: DumpReader<Source>, pipeline: Pipeline, sender: Sender, senderThread: SenderThread?,
    clock: any PacingClock, speed: ReplaySpeed, reporter: StatusReporter
  ) {
    self.reader = reader
    self.pipeline = pipeline
    self.sender = sender
    self.senderThread = senderThread
    self.clock = clock
    self.speed = speed
    self.reporter = reporter
  }

  /// Runs to the end of the dump, drains the ring and finishes the sink.
  public func run() -> ReplaySummary {
    let start = clock.now()
    var pacer = ReplayPacer(speed: { if case .factor(let f) = speed { f } else { 1 } }())
    var nextProgress = start
    var readError: DumpError?
    var sinkError: SinkError?
    var invalidRecords = 0
    var stopSignal: String?
    senderThread?.start()
    reading: while true {
      if let signal = StopSignal.requested {
        stopSignal = signal
        reporter.emit("stopping") { $0.add("signal", signal) }
        break
      }
      let record: DumpRecord?
      do { record = try reader.next() } catch {
        if error.isRecoverable {
          invalidRecords += 1
          continue
        }
        readError = error
        break
      }
      guard let record else { break }
      guard case .sample(let header) = record else { continue }
      var now = clock.now()
      if case .factor = speed {
        let due = pacer.due(kind: header.kind, time: header.dts ?? header.pts, now: now)
        while now < due && StopSignal.requested == nil {
          if let error = pump(now: now, until: due) {
            sinkError = error
            break reading
          }
          now = clock.now()
        }
      }
      reader.withPayload { payload in
        _ = pipeline.append(
          kind: header.kind, pts: header.pts, dts: header.dts, isKeyframe: header.isKeyframe,
          payload: payload, nalUnits: header.nalUnits)
      }
      if let senderThread {
        senderThread.wake()
        if let error = senderThread.failure {
          sinkError = error
          break
        }
      } else if case .failed(let error) = sender.pump(now: now) {
        sinkError = error
        break
      }
      // With a sender thread, the thread reports; the reporter is not shared between threads.
      if senderThread == nil { reporter.tick(now: now) }
      if now >= nextProgress {
        nextProgress = now + progressInterval
        onProgress?(pipeline.snapshot(), now - start)
      }
    }
    if sinkError == nil {
      sinkError = drain(for: stopSignal == nil ? drainTimeout : StopSignal.drainNanoseconds)
    }
    if sinkError == nil {
      do { try sender.finish() } catch { sinkError = error }
    }
    let end = clock.now()
    reporter.tick(now: end, force: true)
    return ReplaySummary(
      snapshot: pipeline.snapshot(), skippedRecords: reader.skippedRecords,
      invalidRecords: invalidRecords, readError: readError,
      sinkError: sinkError, elapsedNanoseconds: end - start,
      peakResidentBytes: ProcResidentProbe().peakResidentBytes(), tierChanges: reporter.tierChanges,
      stopSignal: stopSignal)
  }

  /// Pumps the inline sender (or just waits for a threaded one) until `deadline`.
  private func pump(now: Int64, until deadline: Int64) -> SinkError? {
    var wake = deadline
    if senderThread == nil {
      switch sender.pump(now: now) {
      case .failed(let error): return error
      case .blocked(let until): wake = min(wake, until)
      case .idle: break
      }
      reporter.tick(now: now)
    } else if let error = senderThread?.failure {
      return error
    }
    clock.sleep(until: min(wake, now + 100_000_000))
    return nil
  }

  /// Sends what remains in the ring, waiting for the sink up to `timeout` nanoseconds.
  private func drain(for timeout: Int64) -> SinkError? {
    if let senderThread { return senderThread.stop(drainingFor: timeout) }
    let deadline = clock.now() + timeout
    while true {
      let now = clock.now()
      switch sender.pump(now: now) {
      case .failed(let error): return error
      case .idle:
        return nil
      case .blocked(let until):
        // An output that never answered during the whole run is not waited for at its end.
        if now >= deadline || !sender.hasConnected { return nil }
        reporter.tick(now: now)
        clock.sleep(until: min(until, deadline))
      }
    }
  }
}
