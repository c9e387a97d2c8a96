/// The send-side half of the TS writer: finishes access units as they leave the send ring.
///
/// What depends on which packets are actually sent is decided here, not at capture time:
///
/// - PAT and PMT go out first, in front of every video keyframe, after `forcePSI()` or a
///   `discontinuity`, and whenever 90 ms of DTS passed since the last ones.
/// - PCR = max(last PCR + 1, DTS - slack), so it never repeats or goes back. The slack is
///   ffmpeg's 700 ms mux delay, or more once a unit arrived later than that: units leave in
///   append order, without ffmpeg's interleaving by DTS, so a unit can leave behind others
///   decoded up to a second later (a mic delivering a coarse clock's second in one burst, or a
///   track whose clock runs ahead of the others). The most a unit arrived behind the newest DTS
///   sent (at most `maximumLateness`), plus one PCR interval for the PCR that follows the unit,
///   becomes the slack, so that later units arrive before their decode time. The PCR then stays
///   where it is (one tick on per PCR) until the DTS catches up; it never goes back.
///   Units on the PCR PID get it in the slot their first packet reserves, every time;
///   a unit on another PID is preceded by a PCR-only packet on the PCR PID once 20 ms of PCR time
///   passed, so the clock keeps flowing while the screen (and so the video) is still.
/// - A track's first unit can arrive later than any unit before it did (a mic that delivers a
///   second of frames in one burst), and nothing before it says how late. So until every track
///   of the program has sent a unit, the PCR stays where the first unit put it, while the slack
///   grows with the DTS, up to `maximumLateness` and one PCR interval. Once they all have (a
///   normal stream: within a few frames), the slack shrinks back to what was learned, by at most
///   as much as the slowest track still sending advances (one whose newest DTS is within
///   `maximumLateness` of the newest): a burst of one track that runs ahead of the others does
///   not let the PCR overtake their units still to come. The slack shrinks by at most a PCR
///   interval per unit, so the PCR neither jumps nor goes back meanwhile.
/// - PCRs are at most 40 ms apart: a gap of up to `maximumBridgedGap` (drops, a slow link) is
///   bridged with PCR-only packets evenly spaced in front of the unit. A larger jump of the
///   clock (an outage, a stall) is a time base discontinuity: the PCR carries the
///   discontinuity_indicator, the next unit of every PID does too, and PAT and PMT go first.
/// - Continuity counters are stamped per PID on every packet with payload, so the receiver sees
///   no CC error whatever the ring dropped.
/// - discontinuity_indicator is set on a unit flagged as a clock reset, and on the next unit of
///   every PID after `forceDiscontinuity()`.
///
/// Prefix packets are written into a caller buffer of `maximumPrefixSize` bytes; nothing is
/// allocated per unit.
public struct TSOutputStream: Sendable {
  /// The most PCR time between two PCRs (40 ms, the DVB rule; MPEG-2 allows 100 ms).
  public static let maximumPCRInterval: Int64 = 3_600
  /// PCR-only packets that bridge a gap in front of one unit, besides its own PCR: enough for
  /// the gaps that drops leave on a congested link (measured up to 364 ms), few enough that the
  /// headroom each unit reserves in the ring stays small (13 packets, 2444 bytes).
  public static let maximumBridgePackets = 10
  /// The largest PCR gap bridged (440 ms); beyond it the clock jumped.
  public static let maximumBridgedGap = maximumPCRInterval * Int64(maximumBridgePackets + 1)
  /// The largest prefix `prepare` writes: PAT, PMT, the bridging and the final PCR-only packets.
  public static let maximumPrefixSize = (3 + maximumBridgePackets) * TSPacket.size
  /// The mux delay subtracted from DTS to get the PCR (700 ms).
  public static let pcrDelay: Int64 = 63_000
  /// The most a unit may arrive behind the newest DTS and still be learned in full (2 s): a
  /// clock or a delivery a whole second coarse, on tracks the timeline keeps within its 1 s
  /// jump threshold of each other. It bounds how far the PCR trails the DTS, and so what a
  /// receiver buffers.
  public static let maximumLateness: Int64 = 180_000
  /// PCR time after which a unit on a non-PCR PID is preceded by a PCR-only packet (20 ms).
  public static let pcrInterval: Int64 = 1_800
  /// DTS time after which PAT and PMT are repeated (90 ms, so they go out at least every 100 ms).
  public static let psiInterval: Int64 = 8_100

  /// The tracks being sent.
  public let program: TSProgram
  /// `program.pcrKind`, kept so that a unit's prefix reads no format (whose arrays are reference
  /// counted).
  private let pcrKind: SampleKind?
  /// The PAT packet followed by the PMT packet, continuity counters 0.
  private var psiPackets: [UInt8]
  /// Next continuity counter of PAT, PMT, video, app audio, mic audio.
  private var counters: [UInt8] = [0, 0, 0, 0, 0]
  /// Per sample kind: set the discontinuity_indicator on its next unit.
  private var pendingDiscontinuity: [Bool] = [false, false, false]
  private var psiForced = false
  private var lastPSIDTS: Int64?
  /// The last PCR written, before reduction modulo 2^33.
  private var lastPCR: Int64?
  /// The newest DTS sent since the time base began.
  private var newestDTS: Int64?
  /// The newest DTS sent of each track since the time base began, `.min` before its first unit.
  private var newestTrackDTS: [Int64] = [.min, .min, .min]
  /// The most a unit arrived behind `newestDTS`, capped at `maximumLateness`; kept across time
  /// base discontinuities, as it is a property of how the source delivers.
  private var lateness: Int64 = 0
  /// How far the PCR trails the DTS now: what `lateness` asks for, or more while the first units
  /// of every track are awaited and until the PCR caught up after that.
  private var slack: Int64 = pcrDelay
  /// The program's tracks that have not sent a unit yet, one bit per `SampleKind` raw value.
  private var awaitedTracks: UInt8 = 0
  /// The PCR waits for `awaitedTracks`: from the first unit until each track sent one, or until
  /// the slack reached its cap.
  private var awaitingTracks = true

  public init(program: TSProgram) {
    self.program = program
    pcrKind = program.pcrKind
    for kind in SampleKind.allCases where program.contains(kind) {
      awaitedTracks |= 1 << kind.rawValue
    }
    psiPackets =
      PSI.packet(section: PSI.patSection(), pid: TSPacket.patPID)
      + PSI.packet(section: PSI.pmtSection(program), pid: TSPacket.pmtPID)
  }

  /// Bytes this stream keeps (for the memory ledger).
  public var residentByteCount: Int { psiPackets.count }

  /// Sends PAT and PMT in front of the next unit (after a drop, before restarting at a keyframe).
  public mutating func forcePSI() { psiForced = true }

  /// Sets discontinuity_indicator on the next unit of every PID and sends PAT and PMT first
  /// (after a reconnect).
  public mutating func forceDiscontinuity() {
    for index in pendingDiscontinuity.indices { pendingDiscontinuity[index] = true }
    psiForced = true
  }

  /// Finishes one access unit's packets in place and writes the packets that must precede it.
  ///
  /// - Parameters:
  ///   - unit: the unit's packets as `TSPacketizer` wrote them; continuity counters, PCR and
  ///     discontinuity_indicator are written into them.
  ///   - kind: the unit's track.
  ///   - dts: the unit's decode time in 90 kHz ticks (not reduced modulo 2^33).
  ///   - isKeyframe: a video keyframe gets PAT and PMT in front of it.
  ///   - discontinuity: the unit follows a clock reset; the PCR may restart lower.
  ///   - prefix: at least `maximumPrefixSize` bytes; send its first (returned) bytes before
  ///     `unit`.
  /// - Returns: bytes of prefix packets written.
  /// - Complexity: O(packets in the unit).
  public mutating func prepare(
    unit: UnsafeMutableRawBufferPointer, kind: SampleKind, dts: Int64, isKeyframe: Bool,
    discontinuity: Bool, prefix: UnsafeMutableRawBufferPointer
  ) -> Int {
    precondition(prefix.count >= Self.maximumPrefixSize, "prefix buffer too small")
    var written = 0
    let onPCRPID = kind == pcrKind
    if discontinuity {
      psiForced = true
      // A clock reset on the PCR PID is a time base discontinuity: the PCR may go back.
      if onPCRPID {
        lastPCR = nil
        newestDTS = nil
        for index in newestTrackDTS.indices { newestTrackDTS[index] = .min }
        slack = Self.pcrDelay
      }
    }
    // A reset clock says nothing about delivery, so only other units teach lateness.
    if let newest = newestDTS, !discontinuity {
      lateness = max(lateness, min(newest - dts, Self.maximumLateness))
    }
    let learned = max(Self.pcrDelay, lateness + Self.maximumPCRInterval)
    let advance = newestDTS.map { max(dts - $0, 0) } ?? 0
    let slowest = slowestSendingDTS(newest: newestDTS)
    newestTrackDTS[Int(kind.rawValue)] = max(newestTrackDTS[Int(kind.rawValue)], dts)
    awaitedTracks &= ~(1 << kind.rawValue)
    if awaitingTracks && awaitedTracks != 0 {
      // The PCR stays while the DTS advances: a track yet to come may deliver that late.
      slack = min(slack + advance, Self.maximumLateness + Self.maximumPCRInterval)
      awaitingTracks = slack < Self.maximumLateness + Self.maximumPCRInterval
    } else {
      awaitingTracks = false
      if let slowest, let slowestNow = slowestSendingDTS(newest: max(newestDTS ?? dts, dts)) {
        // Back to what was learned, as the slowest track sending advances; by at most a PCR
        // interval per unit, so a track that stops sending lets the PCR on without a jump.
        slack -= min(max(slowestNow - slowest, 0), Self.maximumPCRInterval)
      }
    }
    slack = max(slack, learned)
    let pcr = max(lastPCR.map { $0 + 1 } ?? .min, dts - slack)
    let jumped = lastPCR.map { pcr - $0 > Self.maximumBridgedGap } ?? false
    newestDTS = max(newestDTS ?? dts, dts)
    if jumped {
      for index in pendingDiscontinuity.indices { pendingDiscontinuity[index] = true }
      psiForced = true
    }

    if psiForced || (kind == .video && isKeyframe)
      || lastPSIDTS.map({ dts < $0 || dts - $0 >= Self.psiInterval }) ?? true
    {
      psiPackets.withUnsafeBytes { psi in
        prefix.baseAddress!.copyMemory(from: psi.baseAddress!, byteCount: psi.count)
      }
      prefix[3] = prefix[3] & 0xF0 | nextCounter(0)
      prefix[TSPacket.size + 3] = prefix[TSPacket.size + 3] & 0xF0 | nextCounter(1)
      written = 2 * TSPacket.size
      psiForced = false
      lastPSIDTS = dts
    }

    let markDiscontinuity = discontinuity || pendingDiscontinuity[Int(kind.rawValue)]
    pendingDiscontinuity[Int(kind.rawValue)] = false
    if let pcrKind, let last = lastPCR, !jumped,
      pcr - last > Self.maximumPCRInterval
    {
      // Intermediate PCRs so that no two are more than 40 ms apart.
      let steps = (pcr - last + Self.maximumPCRInterval - 1) / Self.maximumPCRInterval
      for step in 1..<steps {
        written += writePCROnly(
          into: prefix, at: written, kind: pcrKind, pcr: last + (pcr - last) * step / steps,
          flags: 0)
      }
    }
    let hasField = unit.count >= TSPacket.size && unit[3] & TSPacket.adaptationOnly != 0
    if onPCRPID, hasField, unit[4] >= UInt8(TSPacket.pcrAdaptationFieldSize - 1) {
      unit[5] |= TSPacket.pcrFlag
      TSPacket.writePCR(unit, at: 6, base: pcr)
      lastPCR = pcr
    } else if let pcrKind,
      onPCRPID || lastPCR.map({ pcr - $0 >= Self.pcrInterval }) ?? true
    {
      // The first PCR of a new time base says so in its own packet.
      written += writePCROnly(
        into: prefix, at: written, kind: pcrKind, pcr: pcr,
        flags: jumped ? TSPacket.discontinuityFlag : 0)
      lastPCR = pcr
    }

    if markDiscontinuity, hasField, unit[4] > 0 {
      unit[5] |= TSPacket.discontinuityFlag
    }
    var offset = 0
    while offset + TSPacket.size <= unit.count {
      if unit[offset + 3] & TSPacket.payloadOnly != 0,
        let index = counterIndex(pid: TSPacket.pid(of: unit, at: offset))
      {
        unit[offset + 3] = unit[offset + 3] & 0xF0 | nextCounter(index)
      }
      offset += TSPacket.size
    }
    return written
  }

  /// The oldest of the tracks' newest DTS, among the tracks still sending: those whose newest
  /// DTS is within `maximumLateness` of `newest`. Nil before any unit.
  private func slowestSendingDTS(newest: Int64?) -> Int64? {
    guard let newest else { return nil }
    var slowest = newest
    for dts in newestTrackDTS where dts != .min && newest - dts <= Self.maximumLateness {
      slowest = min(slowest, dts)
    }
    return slowest
  }

  /// Writes a PCR-only packet on the PCR PID and returns its size. It carries no payload, so its
  /// continuity counter repeats the last one and does not advance.
  private func writePCROnly(
    into prefix: UnsafeMutableRawBufferPointer, at start: Int, kind: SampleKind, pcr: Int64,
    flags: UInt8
  ) -> Int {
    TSPacket.writeHeader(
      prefix, at: start, pid: TSPacket.pid(for: kind), unitStart: false,
      adaptationFieldControl: TSPacket.adaptationOnly)
    prefix[start + 3] |= (counters[2 + Int(kind.rawValue)] &- 1) & 0x0F
    TSPacket.writeAdaptationField(
      UnsafeMutableRawBufferPointer(rebasing: prefix[start...]), at: TSPacket.headerSize,
      size: TSPacket.maximumPayloadSize, flags: TSPacket.pcrFlag | flags)
    TSPacket.writePCR(prefix, at: start + 6, base: pcr)
    return TSPacket.size
  }

  /// The counter slot of a PID, or nil for a PID we do not send.
  private func counterIndex(pid: UInt16) -> Int? {
    switch pid {
    case TSPacket.patPID: 0
    case TSPacket.pmtPID: 1
    case TSPacket.videoPID: 2
    case TSPacket.audioAppPID: 3
    case TSPacket.audioMicPID: 4
    default: nil
    }
  }

  /// Returns the counter for a packet with payload and advances it modulo 16.
  private mutating func nextCounter(_ index: Int) -> UInt8 {
    let value = counters[index]
    counters[index] = (value + 1) & 0x0F
    return value
  }
}
