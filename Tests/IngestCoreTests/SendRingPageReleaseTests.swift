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

/// Zeroes what it is asked to release, as `MADV_DONTNEED` leaves private memory, and keeps which
/// pages are resident: written by the ring and not given back since.
private final class ResidentPages: MemoryPageRelease {
  static let page = 4096
  let resident: Mutex<Set<Int>> = Mutex([])

  func release(_ range: UnsafeMutableRawBufferPointer) {
    guard let base = range.baseAddress else { return }
    let address = Int(bitPattern: base)
    let first = (address + Self.page - 1) / Self.page
    let end = (address + range.count) / Self.page
    guard end > first else { return }
    UnsafeMutableRawBufferPointer(
      start: UnsafeMutableRawPointer(bitPattern: first * Self.page),
      count: (end - first) * Self.page
    ).initializeMemory(as: UInt8.self, repeating: 0)
    resident.withLock { $0.subtract(first..<end) }
  }

  /// Marks the pages of `slot` written.
  func wrote(_ slot: UnsafeRawBufferPointer) {
    let address = Int(bitPattern: slot.baseAddress)
    resident.withLock {
      $0.formUnion(address / Self.page...(address + slot.count - 1) / Self.page)
    }
  }

  var bytes: Int { resident.withLock { $0.count } * Self.page }
}

@Suite struct SendRingStandingBacklogTests {
  /// A link slower than the stream keeps a backlog that never drains: the ring's tail goes round
  /// the arena again and again. What stays resident is the part kept for a sender that keeps up,
  /// the backlog and up to two release steps (one behind the head, one left at the arena's top
  /// when the head went round), not the arena; and no unit loses a byte to a release.
  @Test func aStandingBacklogKeepsOnlyItsOwnPagesResident() {
    let pages = ResidentPages()
    let arenaBytes = 16 * SendRing.residentArenaBytes
    let ring = SendRing(
      arenaCapacity: arenaBytes, recordCapacity: 4096, headroom: 0, durationLimit: .max,
      pageRelease: pages)
    let unit = 16 << 10
    let backlog = 16
    var peak = 0
    var nextSent = 0
    // Three times round the arena, the backlog standing at `backlog` units throughout.
    for serial in 0..<(3 * arenaBytes / unit) {
      let mark = UInt8(truncatingIfNeeded: serial % 255 + 1)
      let slot = ring.reserve(audio(serial), byteCount: unit)!
      slot.initializeMemory(as: UInt8.self, repeating: mark)
      pages.wrote(UnsafeRawBufferPointer(slot))
      #expect(ring.commit())
      guard serial >= backlog else { continue }
      let sent = ring.beginSend()!
      let expected = UInt8(truncatingIfNeeded: nextSent % 255 + 1)
      #expect(sent.slot.allSatisfy { $0 == expected }, "unit \(nextSent) lost bytes")
      nextSent += 1
      ring.completeSend()
      peak = max(peak, pages.bytes)
    }
    let bound = SendRing.residentArenaBytes + 2 * SendRing.releaseStep + (backlog + 2) * unit
    #expect(peak <= bound)
    #expect(peak < arenaBytes / 2)
  }
}
