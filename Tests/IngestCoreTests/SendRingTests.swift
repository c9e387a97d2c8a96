import Testing

@testable import IngestCore

/// The bytes of unit number `serial`: a pattern that differs per unit and per position.
private func pattern(_ serial: Int, length: Int) -> [UInt8] {
  (0..<length).map { UInt8(truncatingIfNeeded: serial &* 31 &+ $0 &* 7 &+ 1) }
}

private func audioInfo(_ serial: Int) -> SendRing.UnitInfo {
  SendRing.UnitInfo(kind: .audioApp, pts: Int64(serial), dts: Int64(serial), isKeyframe: true)
}

/// Checks what must hold after every operation: live slots inside the arena and disjoint, each
/// live unit's bytes intact, liveBytes and waitingCount equal to what the records say.
private func checkInvariants(
  _ ring: SendRing, expected: [Int64: [UInt8]], sourceLocation: SourceLocation = #_sourceLocation
) {
  let views = ring.recordViews
  let live = views.filter { $0.state != .dropped }
  #expect(
    ring.liveBytes == live.reduce(0) { $0 + $1.length }, sourceLocation: sourceLocation)
  #expect(
    ring.waitingCount == views.filter { $0.state == .waiting }.count, sourceLocation: sourceLocation
  )
  let sorted = live.sorted { $0.offset < $1.offset }
  for (index, view) in sorted.enumerated() {
    #expect(
      view.offset >= 0 && view.offset + view.length <= ring.arenaCapacity,
      sourceLocation: sourceLocation)
    if index > 0 {
      let previous = sorted[index - 1]
      #expect(previous.offset + previous.length <= view.offset, sourceLocation: sourceLocation)
    }
    if view.state == .waiting {
      #expect(ring.bytes(of: view) == expected[view.sequence], sourceLocation: sourceLocation)
    }
  }
  // Records stay in sequence order (FIFO).
  let sequences = views.map(\.sequence)
  #expect(sequences == sequences.sorted(), sourceLocation: sourceLocation)
}

@Suite struct SendRingTests {
  /// Constant-size units at every fill level, shifted by a pad so that the arena wraps at every
  /// offset: with `(fill + 2) * size <= arena` nothing may ever be dropped.
  @Test(arguments: [(24, 0), (37, 0), (64, 3), (50, 7)])
  func everyWrapPositionAndFillLevelKeepsOrderAndBytes(arena: Int, headroom: Int) {
    for unitBytes in 1...(arena / 3 - headroom) where unitBytes > 0 {
      let slot = unitBytes + headroom
      for fill in 0...max(0, arena / slot - 2) {
        for pad in 0..<slot {
          let ring = SendRing(
            arenaCapacity: arena, recordCapacity: arena + 2, headroom: headroom, durationLimit: .max
          )
          var expected: [Int64: [UInt8]] = [:]
          var serial = 0
          var sentSerial = 0
          func enqueue(_ length: Int) {
            let bytes = pattern(serial, length: length)
            let accepted = bytes.withUnsafeBytes { ring.enqueue(audioInfo(serial), bytes: $0) }
            #expect(accepted)
            expected[Int64(serial)] = bytes
            serial += 1
          }
          func sendOne() {
            guard let unit = ring.beginSend() else {
              Issue.record("nothing to send")
              return
            }
            #expect(unit.sequence == Int64(sentSerial))
            #expect(Array(unit.slot[unit.headroom...]) == expected[unit.sequence])
            #expect(unit.slot.count == unit.headroom + expected[unit.sequence]!.count)
            // The sender may write into the headroom without touching any other unit.
            for index in 0..<unit.headroom { unit.slot[index] = 0xEE }
            checkInvariants(ring, expected: expected)
            ring.completeSend()
            expected[unit.sequence] = nil
            sentSerial += 1
          }
          if pad > headroom { enqueue(pad - headroom) }
          for _ in 0..<fill { enqueue(unitBytes) }
          if pad > headroom { sendOne() }
          for _ in 0..<(2 * arena / slot + 2) {
            enqueue(unitBytes)
            checkInvariants(ring, expected: expected)
            sendOne()
            checkInvariants(ring, expected: expected)
          }
          #expect(ring.waitingCount == fill)
          while ring.waitingCount > 0 { sendOne() }
          #expect(ring.drops.total == 0)
          #expect(ring.liveBytes == 0)
          #expect(ring.isEmpty)
          // An empty ring starts again at offset 0.
          enqueue(unitBytes)
          let first = ring.beginSend()!
          #expect(ring.offset(of: first) == 0)
        }
      }
    }
  }

  /// Random sizes, random sender progress and drops: whatever is sent is a FIFO subsequence with
  /// intact bytes, live slots never overlap, and every unit is either sent, dropped or held.
  @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8])
  func randomTrafficKeepsTheArenaConsistent(seed: UInt64) {
    var generator = SeededGenerator(state: seed)
    let arena = Int.random(in: 40...400, using: &generator)
    let headroom = [0, 0, 4, 13].randomElement(using: &generator)!
    let ring = SendRing(
      arenaCapacity: arena, recordCapacity: Int.random(in: 2...12, using: &generator),
      headroom: headroom, durationLimit: .max)
    var expected: [Int64: [UInt8]] = [:]
    var accepted = 0
    var sent = 0
    var lastSent: Int64 = -1
    var inFlight: SendRing.InFlightUnit?
    for step in 0..<3000 {
      if Int.random(in: 0..<3, using: &generator) > 0 {
        let length = Int.random(in: 1...(arena - headroom), using: &generator)
        let bytes = pattern(step, length: length)
        let kind: SampleKind = Bool.random(using: &generator) ? .audioApp : .audioMic
        let info = SendRing.UnitInfo(
          kind: kind, pts: Int64(step), dts: Int64(step), isKeyframe: true)
        let wasEmpty = ring.recordViews.isEmpty
        if bytes.withUnsafeBytes({ ring.enqueue(info, bytes: $0) }) {
          expected[Int64(accepted)] = bytes
          accepted += 1
          if wasEmpty { #expect(ring.recordViews.last?.offset == 0) }
        }
      } else if let unit = inFlight {
        #expect(Array(unit.slot[unit.headroom...]) == expected[unit.sequence])
        ring.completeSend()
        expected[unit.sequence] = nil
        sent += 1
        inFlight = nil
      } else if let unit = ring.beginSend() {
        #expect(unit.sequence > lastSent)
        lastSent = unit.sequence
        inFlight = unit
      }
      checkInvariants(ring, expected: expected)
      let held = ring.recordViews.filter { $0.state != .dropped }.count
      #expect(accepted == sent + ring.drops.total(.audio) + held)
      #expect(ring.liveBytes <= ring.byteLimit)
    }
  }

  @Test func unitsLargerThanTheArenaOrEmptyAreRefusedWhole() {
    let ring = SendRing(arenaCapacity: 32, recordCapacity: 4, headroom: 4, durationLimit: .max)
    let small = pattern(1, length: 10)
    #expect(small.withUnsafeBytes { ring.enqueue(audioInfo(0), bytes: $0) })
    let large = pattern(2, length: 29)
    #expect(!large.withUnsafeBytes { ring.enqueue(audioInfo(1), bytes: $0) })
    #expect(![UInt8]().withUnsafeBytes { ring.enqueue(audioInfo(2), bytes: $0) })
    #expect(ring.drops[.audioApp, .ringFull] == 2)
    let sent = ring.drainAll()
    #expect(sent.map(\.bytes) == [small])
  }

  @Test func recordCapacityBoundsTheUnitsHeld() {
    let ring = SendRing(arenaCapacity: 1000, recordCapacity: 3, headroom: 0, durationLimit: .max)
    for serial in 0..<5 {
      _ = pattern(serial, length: 5).withUnsafeBytes { ring.enqueue(audioInfo(serial), bytes: $0) }
    }
    // The oldest audio made room each time.
    #expect(ring.drops[.audioApp, .audio] == 2)
    #expect(ring.drainAll().map(\.info.dts) == [2, 3, 4])
  }

  @Test func beginSendReturnsTheSameUnitUntilItCompletes() {
    let ring = SendRing(arenaCapacity: 100, recordCapacity: 4, headroom: 2, durationLimit: .max)
    _ = pattern(0, length: 5).withUnsafeBytes { ring.enqueue(audioInfo(0), bytes: $0) }
    _ = pattern(1, length: 5).withUnsafeBytes { ring.enqueue(audioInfo(1), bytes: $0) }
    let first = ring.beginSend()!
    let again = ring.beginSend()!
    #expect(first.sequence == again.sequence)
    #expect(first.slot.baseAddress == again.slot.baseAddress)
    #expect(ring.waitingCount == 1)
    ring.completeSend()
    #expect(ring.beginSend()?.sequence == 1)
    ring.completeSend()
    ring.completeSend()  // nothing in flight: no effect
    #expect(ring.liveBytes == 0 && ring.isEmpty && ring.beginSend() == nil)
  }

  /// Reserve, write in place, commit: the sender sees the unit only after the commit, the
  /// reserved bytes count as live at once, and an aborted slot comes back whole.
  @Test func reservedSlotsAreInvisibleUntilCommittedAndAbortGivesThemBack() {
    let ring = SendRing(arenaCapacity: 1000, recordCapacity: 8, headroom: 10, durationLimit: .max)
    let bytes = pattern(0, length: 100)
    let slot = ring.reserve(audioInfo(0), byteCount: bytes.count)!
    #expect(slot.count == 100)
    #expect(ring.liveBytes == 110)
    #expect(ring.beginSend() == nil)
    bytes.withUnsafeBytes { slot.copyMemory(from: $0) }
    #expect(ring.commit())
    checkInvariants(ring, expected: [0: bytes])
    // The aborted slot is handed out again: nothing else moved.
    let aborted = ring.reserve(audioInfo(1), byteCount: 50)!
    #expect(ring.liveBytes == 170)
    ring.abort()
    #expect(ring.liveBytes == 110)
    let again = ring.reserve(audioInfo(1), byteCount: 50)!
    #expect(again.baseAddress == aborted.baseAddress)
    ring.abort()
    let unit = ring.beginSend()
    #expect(unit.map { Array($0.slot[$0.headroom...]) } == bytes)
    ring.completeSend()
    #expect(ring.liveBytes == 0 && ring.isEmpty)
    #expect(ring.drops.total == 0)
  }

  /// A reconnect while a non-key frame is being written: the commit drops it, since the new
  /// connection must start at a keyframe.
  @Test func commitAfterTheSenderStartedWaitingForAKeyframeDropsTheFrame() {
    let ring = SendRing(arenaCapacity: 1000, recordCapacity: 8, headroom: 0, durationLimit: .max)
    let key = SendRing.UnitInfo(kind: .video, pts: 0, dts: 0, isKeyframe: true)
    let delta = SendRing.UnitInfo(kind: .video, pts: 1, dts: 1, isKeyframe: false)
    _ = ring.reserve(key, byteCount: 10)
    #expect(ring.commit())
    _ = ring.beginSend()
    _ = ring.reserve(delta, byteCount: 10)
    ring.skipToNewestKeyframe()  // the sender's side, between reserve and commit
    #expect(!ring.commit())
    #expect(ring.drops[.video, .awaitingKeyframe] == 1)
    #expect(ring.liveBytes == 0 && ring.isEmpty)
    _ = ring.reserve(key, byteCount: 10)
    #expect(ring.commit())
    #expect(ring.waitingCount == 1)
  }
}
