import Testing

@testable import IngestCore

/// A ring filled from a compact script, where every unit's bytes are its label:
/// `K` video keyframe, `P` referenced video, `d` disposable video, `a` app audio, `m` mic audio.
private final class ScriptedRing {
  let ring: SendRing
  private(set) var nextLabel: UInt8 = 1
  private var nextDTS: Int64 = 0
  /// The label of every unit offered, with its symbol.
  private(set) var symbols: [UInt8: Character] = [:]

  init(arena: Int = 10_000, byteLimit: Int? = nil, durationLimit: Int64 = .max) {
    ring = SendRing(
      arenaCapacity: arena, recordCapacity: 64, headroom: 0, durationLimit: durationLimit)
    if let byteLimit { ring.byteLimit = byteLimit }
  }

  /// Offers one unit; returns its label, or nil when the ring did not take it.
  @discardableResult
  func offer(_ symbol: Character, bytes: Int = 10, dts: Int64? = nil) -> UInt8? {
    let label = nextLabel
    nextLabel += 1
    symbols[label] = symbol
    let time = dts ?? nextDTS
    nextDTS = time + 1000
    let kind: SampleKind = symbol == "a" ? .audioApp : symbol == "m" ? .audioMic : .video
    let info = SendRing.UnitInfo(
      kind: kind, pts: time, dts: time, isKeyframe: symbol == "K" || kind.isAudio,
      isDisposable: symbol == "d")
    let payload = [UInt8](repeating: label, count: bytes)
    return payload.withUnsafeBytes { ring.enqueue(info, bytes: $0) } ? label : nil
  }

  /// Offers every symbol of `script` (10 bytes each); all must be taken.
  @discardableResult
  func fill(_ script: String) -> [UInt8] {
    script.filter { $0 != " " }.map { symbol in
      let label = offer(symbol)
      #expect(label != nil, "\(symbol) refused")
      return label ?? 0
    }
  }

  /// Sends everything and returns the script of what the sender saw, e.g. "K P a".
  func drain() -> String {
    ring.drainAll().map { String(symbols[$0.bytes[0]]!) }.joined(separator: " ")
  }

  /// Labels of units still held (waiting or in flight), oldest first.
  var heldLabels: [UInt8] {
    ring.recordViews.filter { $0.state != .dropped }.map { ring.bytes(of: $0)[0] }
  }
}

@Suite struct DropPolicyTests {
  @Test func disposableFrameGoesFirst() {
    let s = ScriptedRing(byteLimit: 85)
    s.fill("K P d P K P a a")
    #expect(s.offer("P") != nil)
    #expect(s.ring.drops[.video, .disposable] == 1)
    #expect(s.ring.drops.total == 1)
    #expect(s.drain() == "K P P K P a a P")
  }

  @Test func gopTailOfTheOldestGOPGoesNext() {
    let s = ScriptedRing(byteLimit: 105)
    s.fill("K P P P K P P a a a")
    #expect(s.offer("a") != nil)
    #expect(s.ring.drops[.video, .gopTail] == 3)
    #expect(s.ring.drops.total == 3)
    #expect(!s.ring.awaitingKeyframe)
    #expect(s.drain() == "K K P P a a a a")
  }

  @Test func cuttingTheNewestGOPMakesVideoWaitForTheNextKeyframe() {
    let s = ScriptedRing(byteLimit: 105)
    s.fill("K P P P K P P a a a")
    // 40 bytes need two cuts: the oldest GOP's tail, then the newest GOP's.
    #expect(s.offer("a", bytes: 40) != nil)
    #expect(s.ring.drops[.video, .gopTail] == 5)
    #expect(s.ring.awaitingKeyframe)
    #expect(s.ring.keyframeWanted)
    #expect(s.offer("P") == nil)
    #expect(s.offer("d") == nil)
    #expect(s.ring.drops[.video, .awaitingKeyframe] == 2)
    // Sending the first keyframe frees room for the next one.
    #expect(s.ring.beginSend()?.info.isKeyframe == true)
    s.ring.completeSend()
    #expect(s.offer("K") != nil)
    #expect(s.offer("P") != nil)
    #expect(!s.ring.awaitingKeyframe)
    #expect(s.ring.drops.total == 7)
    #expect(s.drain() == "K a a a a K P")
  }

  @Test func theGOPBeingSentKeepsItsTail() {
    let s = ScriptedRing(byteLimit: 105)
    s.fill("K P P P K P P a a a")
    let sending = s.ring.beginSend()
    #expect(sending?.info.isKeyframe == true)
    #expect(s.offer("a") != nil)
    // GOP 2 is the oldest GOP not being sent; it was the newest, so video now waits.
    #expect(s.ring.drops[.video, .gopTail] == 2)
    #expect(s.ring.awaitingKeyframe)
    s.ring.completeSend()
    #expect(s.drain() == "P P P K a a a a")
  }

  @Test func aNonKeyFrameThatForcedTheNewestGOPCutIsNotSentAfterTheHole() {
    let s = ScriptedRing(byteLimit: 55)
    s.fill("K P K P P")
    _ = s.ring.beginSend()  // GOP 1 is being sent
    // The new frame belongs to GOP 2, whose tail must go to make room for it.
    #expect(s.offer("P") == nil)
    #expect(s.ring.drops[.video, .gopTail] == 2)
    #expect(s.ring.drops[.video, .awaitingKeyframe] == 1)
    s.ring.completeSend()
    #expect(s.drain() == "P K")
  }

  @Test func aKeyframeThatForcedTheNewestGOPCutStartsAGOPThatIsSentWhole() {
    let s = ScriptedRing(byteLimit: 45)
    s.fill("K a P P")
    #expect(s.offer("K") != nil)
    #expect(s.ring.drops[.video, .gopTail] == 2)
    #expect(!s.ring.awaitingKeyframe)
    #expect(s.offer("P") != nil)
    #expect(s.drain() == "K a K P")
  }

  @Test func wholeOldestGOPsGoWhileANewerKeyframeWaitsThenMicThenAppAudio() {
    let one = ScriptedRing(byteLimit: 75)
    one.fill("K m K a K m a")
    #expect(one.offer("a") != nil)
    #expect(one.ring.drops[.video, .oldestGOP] == 1)
    #expect(one.ring.drops.total == 1)
    #expect(one.drain() == "m K a K m a a")

    let two = ScriptedRing(byteLimit: 75)
    two.fill("K m K a K m a")
    #expect(two.offer("a", bytes: 25) != nil)
    #expect(two.ring.drops[.video, .oldestGOP] == 2)
    #expect(two.ring.drops.total == 2)
    #expect(two.drain() == "m a K m a a")

    let five = ScriptedRing(byteLimit: 75)
    five.fill("K m K a K m a")
    #expect(five.offer("a", bytes: 50) != nil)
    // The last keyframe stays: both mic units go, then the oldest app audio.
    #expect(five.ring.drops[.video, .oldestGOP] == 2)
    #expect(five.ring.drops[.audioMic, .audio] == 2)
    #expect(five.ring.drops[.audioApp, .audio] == 1)
    #expect(five.ring.drops.total == 5)
    #expect(five.drain() == "K a a")
  }

  @Test func micAudioGoesBeforeAppAudio() {
    let s = ScriptedRing(byteLimit: 55)
    s.fill("K a m a m")
    #expect(s.offer("a") != nil)
    #expect(s.ring.drops[.audioMic, .audio] == 1)
    #expect(s.ring.drops.total == 1)
    #expect(s.drain() == "K a a m a")
  }

  @Test func durationBoundDropsFromTheOldestEnd() {
    let s = ScriptedRing(durationLimit: 5000)
    for (symbol, dts) in [
      ("K", 0), ("P", 1000), ("P", 2000), ("a", 2500), ("K", 3000), ("P", 4000),
    ] {
      #expect(s.offer(Character(symbol), dts: Int64(dts)) != nil)
    }
    #expect(s.ring.waitingDuration == 4000)
    #expect(s.offer("a", dts: 5500) != nil)
    #expect(s.ring.drops[.video, .oldestGOP] == 3)
    #expect(s.ring.drops.total == 3)
    #expect(s.ring.waitingDuration == 3000)
    #expect(!s.ring.awaitingKeyframe)
    #expect(s.drain() == "a K P a")
  }

  @Test func durationBoundCuttingTheNewestGOPWaitsForAKeyframe() {
    let s = ScriptedRing(durationLimit: 5000)
    #expect(s.offer("K", dts: 0) != nil)
    _ = s.ring.beginSend()
    #expect(s.offer("P", dts: 1000) != nil)
    #expect(s.offer("P", dts: 2000) != nil)
    #expect(s.offer("a", dts: 6100) != nil)
    // The keyframe in flight stays; the rest of its GOP goes.
    #expect(s.ring.drops[.video, .gopTail] == 2)
    #expect(s.ring.awaitingKeyframe)
    #expect(s.offer("P", dts: 6200) == nil)
    #expect(s.ring.drops[.video, .awaitingKeyframe] == 1)
    s.ring.completeSend()
    #expect(s.drain() == "a")
  }

  @Test func droppingTheDisposableAtTheHeadReturnsItsArenaSpace() {
    // Arena and byte limit both 50: the head's space must come back before more is dropped.
    let s = ScriptedRing(arena: 50)
    s.fill("K d P P a")
    _ = s.ring.beginSend()
    s.ring.completeSend()
    #expect(s.offer("a", bytes: 15) != nil)
    #expect(s.ring.drops[.video, .disposable] == 1)
    #expect(s.ring.drops.total == 1)
    #expect(!s.ring.awaitingKeyframe)
    #expect(s.drain() == "P P a a")
  }

  @Test func neverAPartialUnit() {
    let s = ScriptedRing(byteLimit: 50)
    let labels = s.fill("K P a")
    #expect(s.offer("a", bytes: 51) == nil)
    #expect(s.ring.drops[.audioApp, .ringFull] == 1)
    #expect(s.heldLabels == labels)
    // Nothing waits that could be dropped: the unit is refused, video waits for a keyframe.
    let sending = ScriptedRing(byteLimit: 15)
    sending.fill("a")
    _ = sending.ring.beginSend()
    #expect(sending.offer("K") == nil)
    #expect(sending.ring.drops[.video, .ringFull] == 1)
    #expect(sending.ring.awaitingKeyframe)
    #expect(sending.ring.liveBytes == 10)
    for view in sending.ring.recordViews where view.state != .dropped {
      #expect(sending.ring.bytes(of: view).count == 10)
    }
  }

  @Test func skipToNewestKeyframeAfterAReconnect() {
    let s = ScriptedRing()
    s.fill("K P a K P a")
    _ = s.ring.beginSend()
    s.ring.skipToNewestKeyframe()
    #expect(s.ring.drops[.video, .reconnect] == 2)
    #expect(s.ring.drops[.audioApp, .reconnect] == 1)
    #expect(s.ring.liveBytes == 30)
    #expect(s.ring.beginSend()?.info.isKeyframe == true)
    s.ring.completeSend()
    #expect(s.drain() == "P a")

    // Without a waiting keyframe all video goes, audio stays, and video waits for a keyframe.
    let t = ScriptedRing()
    t.fill("K P a P m")
    _ = t.ring.beginSend()
    t.ring.skipToNewestKeyframe()
    #expect(t.ring.drops[.video, .reconnect] == 3)
    #expect(t.ring.drops.total(.reconnect) == 3)
    #expect(t.ring.awaitingKeyframe)
    #expect(t.offer("P") == nil)
    #expect(t.offer("K") != nil)
    #expect(t.drain() == "a m K")
  }

  /// Random traffic under changing bounds: once a referenced frame of a GOP is missing (dropped or
  /// refused), no later frame of that GOP is ever sent; and every unit is accounted for.
  @Test(arguments: Array(UInt64(1)...UInt64(12)))
  func laterFramesOfAGOPAreNeverSentAfterAnEarlierOneWasDropped(seed: UInt64) {
    var generator = SeededGenerator(state: seed &* 0x1234_5678_9ABC)
    let ring = SendRing(
      arenaCapacity: Int.random(in: 300...3000, using: &generator), recordCapacity: 48, headroom: 0,
      durationLimit: Int64.random(in: 5_000...50_000, using: &generator))
    struct Frame {
      var gop: Int
      var index: Int
      var disposable: Bool
    }
    var offered: [[Frame]] = []  // by GOP, every video frame offered
    var bySequence: [Int64: Frame] = [:]
    var sent = Set<[Int]>()
    var accepted: Int64 = 0
    var sentCount = 0
    var dts: Int64 = 0
    var inFlight: SendRing.InFlightUnit?
    for step in 0..<4000 {
      switch Int.random(in: 0..<100, using: &generator) {
      case 0..<55:
        let kind = [SampleKind.video, .video, .video, .audioApp, .audioMic].randomElement(
          using: &generator)!
        var info = SendRing.UnitInfo(kind: kind, pts: dts, dts: dts, isKeyframe: kind.isAudio)
        dts += Int64.random(in: 0...1500, using: &generator)
        var frame: Frame?
        if kind == .video {
          let key = offered.isEmpty || Int.random(in: 0..<12, using: &generator) == 0
          if key { offered.append([]) }
          info.isKeyframe = key
          info.isDisposable = !key && Int.random(in: 0..<4, using: &generator) == 0
          let gop = offered.count - 1
          frame = Frame(gop: gop, index: offered[gop].count, disposable: info.isDisposable)
          offered[gop].append(frame!)
        }
        let bytes = [UInt8](
          repeating: UInt8(step & 0xFF), count: Int.random(in: 1...150, using: &generator))
        if bytes.withUnsafeBytes({ ring.enqueue(info, bytes: $0) }) {
          if let frame { bySequence[accepted] = frame }
          accepted += 1
        }
      case 55..<90:
        if inFlight == nil { inFlight = ring.beginSend() }
        if let unit = inFlight, Bool.random(using: &generator) {
          ring.completeSend()
          sentCount += 1
          inFlight = nil
          if let frame = bySequence[unit.sequence] {
            for earlier in offered[frame.gop][..<frame.index] where !earlier.disposable {
              #expect(
                sent.contains([earlier.gop, earlier.index]),
                "GOP \(frame.gop) frame \(frame.index) sent after a hole")
            }
            sent.insert([frame.gop, frame.index])
          }
        }
      case 90..<97:
        ring.byteLimit = Int.random(in: 100...ring.arenaCapacity, using: &generator)
      default:
        ring.skipToNewestKeyframe()
        inFlight = nil
      }
      let held = ring.recordViews.filter { $0.state != .dropped }.count
      let refused = ring.drops.total(.ringFull) + ring.drops.total(.awaitingKeyframe)
      #expect(Int(accepted) == sentCount + (ring.drops.total - refused) + held)
    }
  }
}
