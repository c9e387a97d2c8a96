import Synchronization
import Testing

@testable import IngestCore

/// Records what the ring asks to release, as offsets into its arena.
private final class RecordingPageRelease: MemoryPageRelease {
  /// Addresses and lengths of the ranges asked for, in order.
  let released = Mutex<[(address: UInt, count: Int)]>([])

  func release(_ range: UnsafeMutableRawBufferPointer) {
    let address = UInt(bitPattern: range.baseAddress)
    released.withLock { $0.append((address, range.count)) }
  }

  func offsets(in ring: SendRing) -> [Range<Int>] {
    let arena = UInt(bitPattern: ring.arena.baseAddress)
    return released.withLock { $0 }.map { range in
      let start = Int(range.address - arena)
      return start..<start + range.count
    }
  }
}

private func audio(_ serial: Int) -> SendRing.UnitInfo {
  SendRing.UnitInfo(kind: .audioApp, pts: Int64(serial), dts: Int64(serial), isKeyframe: true)
}

/// Enqueues `count` units of `length` bytes, each filled with its serial number.
private func fill(_ ring: SendRing, count: Int, length: Int, from first: Int = 0) {
  for serial in first..<first + count {
    let bytes = [UInt8](repeating: UInt8(truncatingIfNeeded: serial), count: length)
    #expect(bytes.withUnsafeBytes { ring.enqueue(audio(serial), bytes: $0) })
  }
}

private func sendAll(_ ring: SendRing) {
  while ring.beginSend() != nil { ring.completeSend() }
}

@Suite struct SendRingPageReleaseTests {
  let keep = SendRing.residentArenaBytes

  private func makeRing(_ release: RecordingPageRelease) -> SendRing {
    SendRing(
      arenaCapacity: 8 * keep, recordCapacity: 4096, headroom: 0, durationLimit: .max,
      pageRelease: release)
  }

  @Test func aDrainedBacklogGivesBackThePagesPastTheResidentPart() {
    let release = RecordingPageRelease()
    let ring = makeRing(release)
    let unit = 64 << 10
    // A backlog of three resident parts: nothing is sent while it builds.
    fill(ring, count: 3 * keep / unit, length: unit)
    #expect(release.offsets(in: ring).isEmpty)
    sendAll(ring)
    #expect(release.offsets(in: ring) == [keep..<3 * keep])
    // The next unit starts at offset 0 again, and the next drain has nothing to give back.
    fill(ring, count: 1, length: unit, from: 100)
    let next = ring.beginSend()!
    #expect(next.slot.baseAddress == ring.arena.baseAddress)
    #expect(next.slot.allSatisfy { $0 == 100 })
    ring.completeSend()
    #expect(release.offsets(in: ring).count == 1)
  }

  @Test func aBacklogWithinTwiceTheResidentPartKeepsItsPages() {
    let release = RecordingPageRelease()
    let ring = makeRing(release)
    fill(ring, count: 3, length: keep / 2)
    sendAll(ring)
    #expect(release.offsets(in: ring).isEmpty)
  }

  @Test func aSlotBeingWrittenKeepsThePagesUntilTheNextDrain() {
    let release = RecordingPageRelease()
    let ring = makeRing(release)
    fill(ring, count: 3, length: keep)
    // The capture thread reserves a slot behind the backlog, and writes it while the sender
    // sends the rest: the ring is empty but for it.
    let slot = ring.reserve(audio(7), byteCount: 1000)!
    sendAll(ring)
    #expect(release.offsets(in: ring).isEmpty)
    slot.initializeMemory(as: UInt8.self, repeating: 7)
    #expect(ring.commit())
    let unit = ring.beginSend()!
    #expect(unit.slot.allSatisfy { $0 == 7 })
    ring.completeSend()
    #expect(release.offsets(in: ring) == [keep..<3 * keep + 1000])
  }
}
