import IngestCore
import Testing

@testable import IngestSRT

/// Records messages; times out on the calls listed in `timeouts` (1-based call numbers).
private final class FakeLink {
  var messages: [[UInt8]] = []
  var calls = 0
  var timeouts: Set<Int> = []

  func send(_ message: UnsafeRawBufferPointer) -> Bool {
    calls += 1
    if timeouts.contains(calls) { return false }
    messages.append(Array(message))
    return true
  }

  var stream: [UInt8] { messages.flatMap { $0 } }
}

/// Units of the given packet counts, each packet filled with a byte identifying unit and packet.
private func makeUnits(_ packetCounts: [Int]) -> [(OutgoingUnit, [UInt8])] {
  packetCounts.enumerated().map { index, count in
    let unit = OutgoingUnit(
      kind: .video, pts: Int64(index) * 3000, dts: Int64(index) * 3000, isKeyframe: index == 0,
      isDiscontinuity: false, prefixLength: 0)
    var bytes: [UInt8] = []
    for packet in 0..<count {
      bytes.append(0x47)
      bytes.append(
        contentsOf: repeatElement(UInt8(truncatingIfNeeded: index &* 31 &+ packet), count: 187))
    }
    return (unit, bytes)
  }
}

@Suite struct SRTMessageChunkerTests {
  static let size = SRTMessageChunker.messageSize

  @Test(arguments: [[1], [7], [8], [6, 1], [3, 3, 3, 3, 3], [1, 20, 2, 13, 7, 0, 5], [50]])
  func everyMessageIsWholeUntilFlush(packetCounts: [Int]) throws {
    var chunker = SRTMessageChunker(endpoint: "srt://test")
    let link = FakeLink()
    let units = makeUnits(packetCounts)
    for (unit, bytes) in units {
      let progress = try bytes.withUnsafeBytes { raw in
        try chunker.push(unit, bytes: raw) { link.send($0) }
      }
      #expect(progress == .complete)
      let carried = chunker.carryCount
      #expect(carried < Self.size && carried % 188 == 0)
    }
    #expect(link.messages.allSatisfy { $0.count == Self.size })
    #expect(try chunker.flush { link.send($0) } == .complete)
    #expect(link.messages.dropLast().allSatisfy { $0.count == Self.size })
    let same = link.stream == units.flatMap { $0.1 }
    #expect(same)
    let carried = chunker.carryCount
    #expect(carried == 0)
  }

  @Test(arguments: [1, 2, 3, 4, 6])
  func resumesAfterTimeoutWithoutLossOrRepeat(timeoutOnCall: Int) throws {
    var chunker = SRTMessageChunker(endpoint: "srt://test")
    let link = FakeLink()
    link.timeouts = [timeoutOnCall, timeoutOnCall + 1, timeoutOnCall + 4]
    let units = makeUnits([4, 12, 9, 1, 22, 3])
    var blockedCount = 0
    for (unit, bytes) in units {
      var progress = SRTMessageChunker.Progress.blocked
      var attempts = 0
      while progress == .blocked {
        attempts += 1
        try #require(attempts < 10)
        progress = try bytes.withUnsafeBytes { raw in
          try chunker.push(unit, bytes: raw) { link.send($0) }
        }
        if progress == .blocked { blockedCount += 1 }
      }
    }
    var flushed = try chunker.flush { link.send($0) }
    if flushed == .blocked { flushed = try chunker.flush { link.send($0) } }
    #expect(flushed == .complete)
    #expect(blockedCount > 0)
    let same = link.stream == units.flatMap { $0.1 }
    #expect(same)
    #expect(link.messages.dropLast().allSatisfy { $0.count == Self.size })
  }

  @Test func anotherUnitAfterAPartlySentOneIsRetryable() throws {
    var chunker = SRTMessageChunker(endpoint: "srt://test")
    let link = FakeLink()
    link.timeouts = [2]
    let units = makeUnits([20, 3])
    let first = try units[0].1.withUnsafeBytes { raw in
      try chunker.push(units[0].0, bytes: raw) { link.send($0) }
    }
    let partial = chunker.hasPartialUnit
    #expect(first == .blocked)
    #expect(partial)
    #expect(throws: SinkError.self) {
      try units[1].1.withUnsafeBytes { raw in
        try chunker.push(units[1].0, bytes: raw) { link.send($0) }
      }
    }
    chunker.reset()
    let cleared = !chunker.hasPartialUnit && chunker.carryCount == 0
    #expect(cleared)
  }

  @Test func anotherUnitAfterAnUntouchedBlockedOneIsAccepted() throws {
    var chunker = SRTMessageChunker(endpoint: "srt://test")
    let link = FakeLink()
    link.timeouts = [1]
    let units = makeUnits([7, 7])
    let first = try units[0].1.withUnsafeBytes { raw in
      try chunker.push(units[0].0, bytes: raw) { link.send($0) }
    }
    let partial = chunker.hasPartialUnit
    #expect(first == .blocked)
    #expect(!partial)
    let second = try units[1].1.withUnsafeBytes { raw in
      try chunker.push(units[1].0, bytes: raw) { link.send($0) }
    }
    #expect(second == .complete)
    let same = link.stream == units[1].1
    #expect(same)
  }

  @Test func partialPacketsAreFatal() {
    var chunker = SRTMessageChunker(endpoint: "srt://test")
    let unit = makeUnits([1])[0].0
    let bytes = [UInt8](repeating: 0x47, count: 200)
    #expect(
      throws: SinkError.unsupported(
        endpoint: "srt://test",
        reason: "a unit of 200 bytes is not a whole number of 188-byte TS packets")
    ) {
      try bytes.withUnsafeBytes { raw in try chunker.push(unit, bytes: raw) { _ in true } }
    }
  }

  @Test func sendFailurePropagates() {
    var chunker = SRTMessageChunker(endpoint: "srt://test")
    let (unit, bytes) = makeUnits([7])[0]
    let lost = SinkError.write(endpoint: "srt://test", reason: "lost", retryable: true)
    #expect(throws: lost) {
      try bytes.withUnsafeBytes { raw in
        try chunker.push(unit, bytes: raw) { _ throws(SinkError) in throw lost }
      }
    }
  }
}
