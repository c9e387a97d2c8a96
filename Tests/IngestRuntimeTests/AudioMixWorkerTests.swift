import IngestAudioMix
import IngestCore
import IngestPOSIX
import Testing

@testable import IngestRuntime

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The mix runs on its own thread: the capture thread only queues, a full queue drops and
/// counts instead of waiting (or waits without losing anything at `--speed max`), and the mix
/// sees every frame, video time, mute and format change in the order they were submitted.
@Suite struct AudioMixWorkerTests {
  /// A mix that logs what it is given and on which thread, and emits one frame per audio frame
  /// (its payload, `framesPerTake` times) and one more at `finish`. While `held`, `take` waits
  /// (at most 10 s, so that a take on the caller's thread fails the test instead of hanging it).
  final class RecordingMix: AudioMixProcessing {
    var isMicMuted = false
    var log: [String] = []
    var threads: [pthread_t] = []
    var framesPerTake = 1
    let gate = ConditionLock()
    var held = false

    func observeVideo(_ pts: MediaTime) { log.append("video \(pts.value)") }

    func changeFormat(_ format: AACFormat, for kind: SampleKind) throws(AudioMixStageError) {
      log.append("format \(kind) \(format.channels)")
      if kind == .audioApp { throw .format(track: "\(kind)", reason: "cannot change") }
    }

    func take(
      _ kind: SampleKind, pts: MediaTime, payload: UnsafeRawBufferPointer,
      emit: (_ pts: MediaTime, _ payload: UnsafeRawBufferPointer) -> Void
    ) {
      threads.append(pthread_self())
      let deadline = SystemClock().now() + .seconds(10)
      gate.withLock {
        while held { if !gate.wait(until: deadline) { break } }
      }
      log.append("\(kind) \(pts.value)\(isMicMuted ? " muted" : "")")
      for _ in 0..<framesPerTake { emit(pts, payload) }
    }

    func finish(emit: (_ pts: MediaTime, _ payload: UnsafeRawBufferPointer) -> Void) {
      log.append("finish")
      [UInt8](repeating: 0xFF, count: 3).withUnsafeBytes {
        emit(MediaTime(value: -1, timescale: 48_000), $0)
      }
    }

    func release() {
      gate.withLock {
        held = false
        gate.broadcast()
      }
    }
  }

  /// What the capture side received from the mix.
  final class Received {
    var frames: [(pts: Int64, bytes: [UInt8])] = []
    var refused: [String] = []
  }

  static let roomy = AudioMixHandOff(
    inputArenaBytes: 4096, inputRecords: 64, outputArenaBytes: 4096, outputRecords: 64)

  static func time(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 48_000) }

  static func submit(
    _ worker: AudioMixWorker, _ kind: SampleKind, _ value: Int64, muted: Bool = false,
    into received: Received
  ) {
    let bytes = (0..<(Int(value) % 50 + 1)).map { UInt8(truncatingIfNeeded: Int(value) + $0) }
    bytes.withUnsafeBytes {
      worker.submitAudio(
        kind, pts: time(value), payload: $0, micMuted: muted,
        emit: { received.frames.append(($0.value, Array($1))) },
        refused: { kind, _ in received.refused.append("\(kind)") })
    }
  }

  static func finish(_ worker: AudioMixWorker, into received: Received) {
    worker.finish(
      emit: { received.frames.append(($0.value, Array($1))) },
      refused: { received.refused.append("\($0): \($1)") })
  }

  static func expectedBytes(_ value: Int64) -> [UInt8] {
    (0..<(Int(value) % 50 + 1)).map { UInt8(truncatingIfNeeded: Int(value) + $0) }
  }

  /// Every frame is mixed on a thread other than the caller's, and comes back whole and in
  /// order, the finish's frame last.
  @Test func theMixRunsOnItsOwnThread() {
    let mix = RecordingMix()
    let worker = AudioMixWorker(stage: mix, handOff: Self.roomy, whenFull: .drop)
    worker.start()
    let received = Received()
    for value in Int64(0)..<40 {
      Self.submit(worker, value % 2 == 0 ? .audioApp : .audioMic, value, into: received)
    }
    Self.finish(worker, into: received)
    let caller = pthread_self()
    #expect(mix.threads.count == 40)
    #expect(!mix.threads.contains { pthread_equal($0, caller) != 0 })
    #expect(received.frames.map(\.pts) == Array(0..<40) + [-1])
    for (pts, bytes) in received.frames.dropLast() { #expect(bytes == Self.expectedBytes(pts)) }
    #expect(worker.droppedSamples == 0)
  }

  /// With the mix stuck in a frame, the capture side goes on: what the queue cannot hold is
  /// dropped and counted, and what it held is mixed once the mix goes on.
  @Test func aFullQueueDropsAndCountsInsteadOfWaiting() {
    let mix = RecordingMix()
    mix.held = true
    let small = AudioMixHandOff(
      inputArenaBytes: 4096, inputRecords: 4, outputArenaBytes: 4096, outputRecords: 16)
    let worker = AudioMixWorker(stage: mix, handOff: small, whenFull: .drop)
    worker.start()
    let received = Received()
    let start = SystemClock().now()
    for value in Int64(0)..<10 { Self.submit(worker, .audioApp, value, into: received) }
    // Ten submits while the mix is held: had one waited for it, the 10 s hold would show.
    #expect(SystemClock().now() - start < .seconds(5))
    #expect(worker.droppedSamples == 6)
    mix.release()
    Self.finish(worker, into: received)
    #expect(received.frames.map(\.pts) == [0, 1, 2, 3, -1])
    #expect(!mix.threads.contains { pthread_equal($0, pthread_self()) != 0 })
  }

  /// A format change that meets a full queue is not dropped with the frames: it reaches the
  /// mix before the first frame queued after it.
  @Test func aFormatChangeOutlivesAFullQueue() throws {
    let mix = RecordingMix()
    mix.held = true
    let small = AudioMixHandOff(
      inputArenaBytes: 4096, inputRecords: 2, outputArenaBytes: 4096, outputRecords: 16)
    let worker = AudioMixWorker(stage: mix, handOff: small, whenFull: .drop)
    worker.start()
    let received = Received()
    let emit: AudioMixWorker.Emit = { received.frames.append(($0.value, Array($1))) }
    let refused: AudioMixWorker.Refused = { kind, _ in received.refused.append("\(kind)") }
    for value in Int64(0)..<4 { Self.submit(worker, .audioMic, value, into: received) }
    let mono = try AACFormat(objectType: 2, sampleRate: 44_100, channels: 1)
    worker.submitFormat(mono, for: .audioMic, emit: emit, refused: refused)
    Self.submit(worker, .audioMic, 4, into: received)
    #expect(worker.droppedSamples == 3)
    mix.release()
    // Until the mix has made room: frame 5 is dropped while the queue is still full.
    for _ in 0..<10_000 {
      let dropped = worker.droppedSamples
      Self.submit(worker, .audioMic, 5, into: received)
      if worker.droppedSamples == dropped { break }
      usleep(1_000)
    }
    Self.finish(worker, into: received)
    #expect(mix.log == ["audioMic 0", "audioMic 1", "format audioMic 1", "audioMic 5", "finish"])
  }

  /// At `--speed max` a full queue waits, and the output queue is emptied meanwhile (the mix
  /// may be waiting for room there): nothing is lost, even with queues of one or two records.
  @Test func waitingLosesNothing() {
    let mix = RecordingMix()
    mix.framesPerTake = 3
    let tiny = AudioMixHandOff(
      inputArenaBytes: 64, inputRecords: 2, outputArenaBytes: 64, outputRecords: 1)
    let worker = AudioMixWorker(stage: mix, handOff: tiny, whenFull: .wait)
    worker.start()
    let received = Received()
    for value in Int64(0)..<200 { Self.submit(worker, .audioApp, value, into: received) }
    Self.finish(worker, into: received)
    #expect(worker.droppedSamples == 0)
    #expect(received.frames.map(\.pts) == (0..<200).flatMap { [$0, $0, $0] } + [-1])
    #expect(received.frames.allSatisfy { $0.pts < 0 || $0.bytes == Self.expectedBytes($0.pts) })
  }

  /// A frame larger than the whole queue (a corrupt record) is dropped and counted, even when
  /// a full queue waits: waiting would never end.
  @Test func aFrameLargerThanTheQueueIsDropped() {
    let mix = RecordingMix()
    let small = AudioMixHandOff(
      inputArenaBytes: 64, inputRecords: 4, outputArenaBytes: 256, outputRecords: 4)
    let worker = AudioMixWorker(stage: mix, handOff: small, whenFull: .wait)
    worker.start()
    let received = Received()
    [UInt8](repeating: 1, count: 65).withUnsafeBytes {
      worker.submitAudio(
        .audioApp, pts: Self.time(0), payload: $0, micMuted: false,
        emit: { received.frames.append(($0.value, Array($1))) }, refused: { _, _ in })
    }
    Self.submit(worker, .audioApp, 1, into: received)
    Self.finish(worker, into: received)
    #expect(worker.droppedSamples == 1)
    #expect(received.frames.map(\.pts) == [1, -1])
  }

  /// Video times, mutes and format changes reach the mix in the order they were submitted;
  /// a format it refuses comes back to the capture side.
  @Test func everythingArrivesInOrder() throws {
    let mix = RecordingMix()
    let worker = AudioMixWorker(stage: mix, handOff: Self.roomy, whenFull: .drop)
    worker.start()
    let received = Received()
    let emit: AudioMixWorker.Emit = { received.frames.append(($0.value, Array($1))) }
    let refused: AudioMixWorker.Refused = { kind, _ in received.refused.append("\(kind)") }
    worker.submitVideo(pts: Self.time(5), emit: emit, refused: refused)
    Self.submit(worker, .audioApp, 1, into: received)
    Self.submit(worker, .audioMic, 2, muted: true, into: received)
    let mono = try AACFormat(objectType: 2, sampleRate: 48_000, channels: 1)
    worker.submitFormat(mono, for: .audioMic, emit: emit, refused: refused)
    let broken = try AACFormat(objectType: 2, sampleRate: 48_000, channels: 2)
    worker.submitFormat(broken, for: .audioApp, emit: emit, refused: refused)
    Self.submit(worker, .audioMic, 3, into: received)
    Self.finish(worker, into: received)
    #expect(
      mix.log == [
        "video 5", "audioApp 1", "audioMic 2 muted", "format audioMic 1", "format audioApp 2",
        "audioMic 3", "finish",
      ])
    #expect(received.refused.count == 1)
    #expect(received.refused.first?.hasPrefix("audioApp") == true)
  }

  /// Stopping at once (SIGQUIT) ends the thread without mixing what is queued, even with the
  /// mix waiting for room in a full output queue.
  @Test func abandonEndsPromptly() {
    let mix = RecordingMix()
    mix.framesPerTake = 4
    let tiny = AudioMixHandOff(
      inputArenaBytes: 256, inputRecords: 8, outputArenaBytes: 256, outputRecords: 1)
    let worker = AudioMixWorker(stage: mix, handOff: tiny, whenFull: .drop)
    worker.start()
    let received = Received()
    for value in Int64(0)..<8 { Self.submit(worker, .audioApp, value, into: received) }
    worker.abandon()
    #expect(!mix.log.contains("finish"))
    #expect(mix.threads.count < 8)
  }

  /// The queue's arena at every wrap position: payloads of every length up to a third of the
  /// arena come out whole and in order, and a full arena refuses without changing anything.
  @Test func queueWrapsAtEveryPosition() {
    for length in 0...22 {
      for offset in 0..<64 {
        let queue = AudioMixQueue<Int>(arenaBytes: 64, recordCapacity: 8)
        // Shift the write position by `offset` first.
        let shift = [UInt8](repeating: 0, count: offset)
        #expect(shift.withUnsafeBytes { queue.push(-1, payload: $0) })
        var next = 0
        var expected = 0
        for _ in 0..<40 {
          let bytes = (0..<length).map { UInt8(truncatingIfNeeded: next &+ $0) }
          if bytes.withUnsafeBytes({ queue.push(next, payload: $0) }) {
            next += 1
          } else {
            // Full: take the oldest, which frees room.
            guard let (record, payload) = queue.first else {
              Issue.record("an empty queue refused \(length) bytes")
              return
            }
            if record >= 0 {
              #expect(record == expected)
              #expect(
                Array(payload) == (0..<length).map { UInt8(truncatingIfNeeded: record &+ $0) })
              expected += 1
            }
            queue.removeFirst()
          }
        }
        while let (record, payload) = queue.first {
          if record >= 0 {
            #expect(record == expected)
            #expect(Array(payload) == (0..<length).map { UInt8(truncatingIfNeeded: record &+ $0) })
            expected += 1
          }
          queue.removeFirst()
        }
        #expect(expected == next)
      }
    }
  }
}
