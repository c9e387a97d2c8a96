import IngestAudioMix
import IngestCore
import IngestPOSIX

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What `AudioMixWorker` asks of a mix: `AudioMixStage`, or a test's stand-in.
protocol AudioMixProcessing: AnyObject {
  var isMicMuted: Bool { get set }
  func observeVideo(_ pts: MediaTime)
  func changeFormat(_ format: AACFormat, for kind: SampleKind) throws(AudioMixStageError)
  func take(
    _ kind: SampleKind, pts: MediaTime, payload: UnsafeRawBufferPointer,
    emit: (_ pts: MediaTime, _ payload: UnsafeRawBufferPointer) -> Void)
  func finish(emit: (_ pts: MediaTime, _ payload: UnsafeRawBufferPointer) -> Void)
}

extension AudioMixStage: AudioMixProcessing {}

/// Runs the audio mix on a thread of its own, so that the capture thread only copies each
/// app and mic frame into a queue and goes on (decoding, mixing and encoding take about
/// 0.5 ms a frame, docs/benchmarks.md).
///
/// ```
///  capture thread                      mix thread
///  submit(audio / video time /  ──►  input queue ──► AudioMixStage.take / observeVideo /
///         format change)              (arena +        changeFormat, in submit order
///                                      records)            │ mixed AAC frames
///  drain ─► Pipeline.append  ◄──────  output queue ◄───────┘
///           (every lane that mixes)
/// ```
///
/// The mixed frames come back to the capture thread, which appends them: `Pipeline.append` has
/// one producer (its capture lock is taken by that thread alone, so it never waits on it), and
/// the appends of one lane stay in one thread's order. Both queues are allocated at start,
/// sized by `AudioMixHandOff` (in the ledger with the mix); one `ConditionLock` guards their
/// indices, held for an index update and the copy of one frame, never across the mix's work.
///
/// A full input queue (the mix has fallen a second behind) drops the sample and counts it
/// (`droppedSamples`) under `FullQueue.drop`, the policy of a run paced in real time: the
/// capture thread never waits for the mix. A replay faster than that (`--speed max`, a virtual
/// clock) is not a capture: under `FullQueue.wait` it keeps at most `waitDepth` records queued,
/// waiting for the mix beyond that, so that the mixed track loses nothing (as its inline
/// outputs do) and enters the rings as close behind the video as when the mix ran inline:
/// the timeline takes an audio track that comes back a second behind the others as reset.
///
/// `@unchecked`: the queues and flags are `lock`'s state, but three things the compiler cannot
/// check are shared outside it. The stage (not `Sendable`) is used by the mix thread alone
/// between `start` and the end of `finish` or `abandon` (then by whoever reads its counters,
/// after the join); the thread's handle by the capture thread alone; and a queue's first
/// payload is read without the lock by the one thread that takes it, which it may, because the
/// other thread writes only free bytes until `removeFirst` (under the lock) frees them.
final class AudioMixWorker: @unchecked Sendable {
  /// What `submit` does when the input queue is full.
  enum FullQueue {
    /// Drop the sample and count it.
    case drop
    /// Wait while `waitDepth` records are queued, taking mixed frames meanwhile.
    case wait
  }

  /// One entry of the input queue, in the order the capture thread met them.
  enum Input {
    case audio(SampleKind, pts: MediaTime, micMuted: Bool)
    case video(pts: MediaTime)
    case format(AACFormat, SampleKind)
  }

  /// One entry of the output queue.
  enum Output {
    case frame(pts: MediaTime)
    case formatRefused(SampleKind, AudioMixStageError)
  }

  /// Receives a mixed AAC frame on the capture thread.
  typealias Emit = (_ pts: MediaTime, _ payload: UnsafeRawBufferPointer) -> Void
  /// Receives a format the mix could not take, on the capture thread.
  typealias Refused = (_ kind: SampleKind, _ error: AudioMixStageError) -> Void

  private let stage: any AudioMixProcessing
  private let whenFull: FullQueue
  /// Under `FullQueue.wait`, the records queued at most: the mix of one works while the
  /// capture thread reads and appends the next few, without running far ahead.
  static let waitDepth = 4
  /// What the capture thread and the mix thread share.
  private struct State {
    let input: AudioMixQueue<Input>
    let output: AudioMixQueue<Output>
    var ending = false
    var abandoning = false
    var finished = false
    var dropped = 0
    /// Format changes a full queue could not take under `FullQueue.drop`, by track: queued
    /// before any later record, so the mix still sees them in order (the frames between were
    /// dropped), where dropping one would leave the track's decoder on the old format.
    var pendingFormats: [AACFormat?] = [nil, nil, nil]

    /// Queues the format changes a full queue left pending; false when one still does not fit.
    mutating func pushPendingFormats() -> Bool {
      for index in pendingFormats.indices {
        guard let format = pendingFormats[index], let kind = SampleKind(rawValue: UInt8(index))
        else { continue }
        guard
          input.push(.format(format, kind), payload: UnsafeRawBufferPointer(start: nil, count: 0))
        else { return false }
        pendingFormats[index] = nil
      }
      return true
    }
  }

  /// Condition `working` wakes the mix thread, `capturing` the capture thread.
  private let lock: ConditionLock<State>
  private static let working = 0
  private static let capturing = 1
  private var thread: pthread_t?

  /// - Parameters:
  ///   - handOff: the queues' sizes, as the ledger reserved them.
  init(stage: any AudioMixProcessing, handOff: AudioMixHandOff, whenFull: FullQueue) {
    precondition(
      AudioMixQueue<Input>.recordBytes <= AudioMixHandOff.recordBytes
        && AudioMixQueue<Output>.recordBytes <= AudioMixHandOff.recordBytes)
    self.stage = stage
    self.whenFull = whenFull
    let input = AudioMixQueue<Input>(
      arenaBytes: handOff.inputArenaBytes, recordCapacity: handOff.inputRecords)
    let output = AudioMixQueue<Output>(
      arenaBytes: handOff.outputArenaBytes, recordCapacity: handOff.outputRecords)
    lock = ConditionLock(State(input: input, output: output), conditions: 2)
  }

  /// Input samples left out of the mix because its queue was full (or, corrupt, larger than
  /// it), and mixed frames larger than the output queue.
  var droppedSamples: Int { lock.withLock { $0.dropped } }

  /// Starts the mix thread. Without one (the system refused it), `submit` mixes in place.
  func start() {
    guard thread == nil else { return }
    thread = SystemThread.start { self.run() }
  }

  // MARK: Capture thread

  /// Hands one audio frame of `kind` to the mix, with whether the mic is muted from it on.
  /// - Parameter emit: takes mixed frames, when `submit` waits for room (`FullQueue.wait`)
  ///   or runs without a thread.
  func submitAudio(
    _ kind: SampleKind, pts: MediaTime, payload: UnsafeRawBufferPointer, micMuted: Bool,
    emit: Emit, refused: Refused
  ) {
    submit(
      .audio(kind, pts: pts, micMuted: micMuted), payload: payload, emit: emit, refused: refused)
  }

  /// Hands a video frame's time to the mix: the clock a paused input is judged by.
  func submitVideo(pts: MediaTime, emit: Emit, refused: Refused) {
    submit(
      .video(pts: pts), payload: UnsafeRawBufferPointer(start: nil, count: 0), emit: emit,
      refused: refused)
  }

  /// Hands a new format of an audio track to the mix, in order with its frames.
  func submitFormat(_ format: AACFormat, for kind: SampleKind, emit: Emit, refused: Refused) {
    submit(
      .format(format, kind), payload: UnsafeRawBufferPointer(start: nil, count: 0), emit: emit,
      refused: refused)
  }

  private func submit(
    _ record: Input, payload: UnsafeRawBufferPointer, emit: Emit, refused: Refused
  ) {
    guard thread != nil else {
      process(record, payload, emit: emit, refused: refused)
      return
    }
    let waits = whenFull == .wait
    lock.withConditions { locked in
      // Larger than the queue's arena (no AAC frame is: a corrupt record) would never fit.
      guard payload.count <= locked.state.input.byteCapacity else {
        locked.state.dropped += 1
        return
      }
      while (waits && locked.state.input.count >= Self.waitDepth)
        || !locked.state.pushPendingFormats() || !locked.state.input.push(record, payload: payload)
      {
        guard waits else {
          if case .format(let format, let kind) = record {
            locked.state.pendingFormats[Int(kind.rawValue)] = format
          } else {
            locked.state.dropped += 1
          }
          return
        }
        // The mix thread may itself wait for room in the output queue: empty it first.
        if locked.state.output.isEmpty {
          locked.wait(Self.capturing)
        } else {
          locked.whileUnlocked { drain(emit: emit, refused: refused) }
        }
      }
      locked.signal(Self.working)
    }
  }

  /// Hands what the mix made since the last call to `emit` (mixed frames) and `refused`
  /// (formats it could not take), in order. Called at every iteration of the capture loop.
  func drain(emit: Emit, refused: Refused) {
    while true {
      guard let (record, payload) = lock.withLock({ $0.output.first }) else { return }
      // The payload stays put until `removeFirst`: the mix thread writes only free bytes.
      switch record {
      case .frame(let pts): emit(pts, payload)
      case .formatRefused(let kind, let error): refused(kind, error)
      }
      lock.withLock {
        $0.output.removeFirst()
        lock.signal(Self.working)
      }
    }
  }

  /// At the end of the input: lets the mix take what is queued and finish (the encoder
  /// drained), hands everything it made to `emit`, and ends the thread. Bounded by what the
  /// input queue holds; appends never block, even to a stopped output.
  func finish(emit: Emit, refused: Refused) {
    guard let thread else {
      stage.finish(emit: emit)
      return
    }
    lock.withLock {
      $0.ending = true
      // A format still pending has no frame after it to decode: it is left out.
      lock.signal(Self.working)
    }
    while true {
      drain(emit: emit, refused: refused)
      let done = lock.withConditions { locked in
        if !locked.state.finished && locked.state.output.isEmpty { locked.wait(Self.capturing) }
        return locked.state.finished && locked.state.output.isEmpty
      }
      if done { break }
    }
    pthread_join(thread, nil)
    self.thread = nil
  }

  /// Stops the mix thread at once (SIGQUIT): what is queued is left unmixed.
  func abandon() {
    guard let thread else { return }
    lock.withLock {
      $0.abandoning = true
      lock.broadcast(Self.working)
    }
    pthread_join(thread, nil)
    self.thread = nil
  }

  // MARK: Mix thread

  private func run() {
    let emit: Emit = { pts, payload in self.put(.frame(pts: pts), payload: payload) }
    let refused: Refused = { kind, error in
      self.put(.formatRefused(kind, error), payload: UnsafeRawBufferPointer(start: nil, count: 0))
    }
    lock.withConditions { locked in
      while !locked.state.abandoning {
        guard let (record, payload) = locked.state.input.first else {
          if locked.state.ending {
            locked.whileUnlocked { stage.finish(emit: emit) }
            break
          }
          locked.wait(Self.working)
          continue
        }
        // The payload stays put until `removeFirst`: the capture thread writes only free bytes.
        locked.whileUnlocked { process(record, payload, emit: emit, refused: refused) }
        locked.state.input.removeFirst()
        locked.signal(Self.capturing)
      }
      locked.state.finished = true
      locked.signal(Self.capturing)
    }
  }

  /// Queues what the mix made for the capture thread, waiting for room (the capture thread
  /// drains the queue at every iteration, and while it waits in `submit` or `finish`).
  private func put(_ record: Output, payload: UnsafeRawBufferPointer) {
    lock.withConditions { locked in
      // The encoder's frames are smaller than the arena by far; one that is not would never fit.
      guard payload.count <= locked.state.output.byteCapacity else {
        locked.state.dropped += 1
        return
      }
      while !locked.state.abandoning && !locked.state.output.push(record, payload: payload) {
        locked.wait(Self.working)
      }
      locked.signal(Self.capturing)
    }
  }

  private func process(
    _ record: Input, _ payload: UnsafeRawBufferPointer, emit: Emit, refused: Refused
  ) {
    switch record {
    case .audio(let kind, let pts, let micMuted):
      stage.isMicMuted = micMuted
      stage.take(kind, pts: pts, payload: payload, emit: emit)
    case .video(let pts):
      stage.observeVideo(pts)
    case .format(let format, let kind):
      do throws(AudioMixStageError) { try stage.changeFormat(format, for: kind) } catch {
        refused(kind, error)
      }
    }
  }
}
