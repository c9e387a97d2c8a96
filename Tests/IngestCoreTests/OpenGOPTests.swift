import Testing

@testable import IngestCore

/// Open HEVC GOPs: a CRA followed by RASL pictures (NAL types 8, 9) that reference the GOP
/// before it. When video before the CRA did not reach the output, its RASL pictures go too,
/// under the drop's own reason; RADL and trailing pictures, which reference nothing before
/// the CRA, stay.
@Suite struct OpenGOPTests {
  private typealias F = HEVCFixtures

  /// NAL types of the pictures of a GOP script: `I` IDR_W_RADL, `C` CRA, `r` RASL_N, `R` RASL_R,
  /// `L` RADL_R, `T` TRAIL_R.
  private static let types: [Character: UInt8] = [
    "I": 19, "C": 21, "r": 8, "R": 9, "L": 7, "T": 1,
  ]

  /// A pipeline fed HEVC access units by a script of picture types.
  private final class Feed {
    let pipeline: Pipeline
    private var frame: Int64 = 0

    init() throws {
      (pipeline, _) = try makePipeline(tracks: TrackFormats(video: F.format))
    }

    /// Appends each picture of `script` in decoding order; leading pictures show before their
    /// IRAP picture.
    func append(_ script: String) {
      for symbol in script where symbol != " " {
        let leading = "rRL".contains(symbol)
        pipeline.append(
          MediaSample(
            kind: .video, pts: MediaTime(value: (frame + (leading ? 0 : 2)) * 20, timescale: 600),
            dts: MediaTime(value: frame * 20, timescale: 600),
            isKeyframe: symbol == "I" || symbol == "C",
            payload: F.sample([F.slice(OpenGOPTests.types[symbol]!)])))
        frame += 1
      }
    }

    /// Sends what waits and returns the script of what went out, read from each unit's NAL type.
    func drain() -> String {
      var sent = ""
      while let unit = pipeline.beginSend() {
        let type = unit.slot[unit.headroom + 4] >> 1
        sent.append(OpenGOPTests.types.first { $0.value == type }?.key ?? "?")
        pipeline.completeSend(unit, bytes: unit.slot.count)
      }
      return sent
    }

    var drops: DropCounts { pipeline.snapshot().drops }
  }

  @Test func summaryTellsRASLAndTheIRAPPicturesTheyMayFollow() throws {
    func summary(_ type: UInt8) throws -> AVCCSummary {
      try F.sample([F.slice(type)]).withUnsafeBytes {
        try AVCCScanner.summarizeHEVC($0, lengthSize: 4, highestTemporalID: 0)
      }
    }
    for type: UInt8 in [8, 9] { #expect(try summary(type).isRASL, "\(type)") }
    for type: UInt8 in [0, 1, 6, 7, 19, 21] { #expect(try !summary(type).isRASL, "\(type)") }
    for type: UInt8 in [16, 17, 18, 21] { #expect(try summary(type).admitsRASL, "\(type)") }
    for type: UInt8 in [1, 8, 19, 20] { #expect(try !summary(type).admitsRASL, "\(type)") }
  }

  @Test func anUnbrokenStreamSendsEveryLeadingPicture() throws {
    let feed = try Feed()
    feed.append("I T T T C r R L T T C r L T")
    #expect(feed.drain() == "ITTTCrRLTTCrLT")
    #expect(feed.drops.total == 0)
  }

  @Test func aLostPictureCostsTheNextCRAItsRASLPicturesOnly() throws {
    let feed = try Feed()
    feed.append("I T")
    feed.pipeline.sampleLost(.video)
    feed.append("T T C r R L T T C r L T")
    // The rest of GOP 1 (2 T) and the RASL pictures of GOP 2 (r R), all awaitingKeyframe; the
    // next GOP's RASL picture follows an unbroken GOP 2 and is sent.
    #expect(feed.drain() == "ITCLTTCrLT")
    #expect(feed.drops[.video, .awaitingKeyframe] == 4)
    #expect(feed.drops.total == 4)
  }

  @Test func aStreamThatStartsAtACRADropsItsRASLPictures() throws {
    let feed = try Feed()
    feed.append("C r R L T C r T")
    #expect(feed.drain() == "CLTCrT")
    #expect(feed.drops[.video, .awaitingKeyframe] == 2)
  }

  @Test func anIDRGOPKeepsItsPicturesWhateverTheirType() throws {
    // RASL types after an IDR are no leading pictures of it: nothing to skip.
    let feed = try Feed()
    feed.append("I r T")
    #expect(feed.drain() == "IrT")
  }

  @Test func aNewFormatDropsTheRASLPicturesOfItsFirstCRA() throws {
    let feed = try Feed()
    feed.append("I T T")
    let other = try HEVCFormat(
      vps: [F.vps], sps: [F.sps], pps: [F.pps], nalLengthSize: 4, averageFrameRate: 30)
    #expect(feed.pipeline.changeFormat(.hevc(other), for: .video))
    feed.append("C r L T")
    #expect(feed.drain() == "ITTCLT")
    #expect(feed.drops[.video, .awaitingKeyframe] == 1)
  }
}

/// The same rule inside the ring: drops made to fit the budget and after a reconnect.
@Suite struct OpenGOPRingTests {
  /// Units of 10 bytes: `K` keyframe (CRA), `P` referenced, `r` RASL, `L` RADL, `a` app audio.
  private final class Ring {
    let ring: SendRing
    private var label: UInt8 = 1
    private var symbols: [UInt8: Character] = [:]

    init(byteLimit: Int) {
      ring = SendRing(arenaCapacity: 10_000, recordCapacity: 64, headroom: 0, durationLimit: .max)
      ring.byteLimit = byteLimit
    }

    @discardableResult
    func offer(_ script: String) -> [Bool] {
      script.filter { $0 != " " }.map { symbol in
        symbols[label] = symbol
        let kind: SampleKind = symbol == "a" ? .audioApp : .video
        let info = SendRing.UnitInfo(
          kind: kind, pts: Int64(label) * 1000, dts: Int64(label) * 1000,
          isKeyframe: symbol == "K" || kind.isAudio, isLeading: symbol == "r")
        let payload = [UInt8](repeating: label, count: 10)
        label += 1
        return payload.withUnsafeBytes { ring.enqueue(info, bytes: $0) }
      }
    }

    func drain() -> String {
      String(ring.drainAll().map { symbols[$0.bytes[0]]! })
    }
  }

  @Test func aGOPTailCutTakesTheNextGOPsRASLPicturesWithIt() {
    let s = Ring(byteLimit: 105)
    // The stream's first CRA has no earlier GOP: its RASL picture goes on arrival.
    #expect(
      s.offer("K r P P K r r L P") == [true, false, true, true, true, true, true, true, true])
    #expect(s.ring.drops[.video, .awaitingKeyframe] == 1)
    // Making room cuts GOP 1's tail (2 P); GOP 2's RASL pictures referenced it.
    #expect(s.offer("a a a") == [true, true, true])
    #expect(s.ring.drops[.video, .gopTail] == 4)
    #expect(s.drain() == "KKLPaaa")
  }

  @Test func aRASLPictureBeingWrittenWhenItsReferencesGoIsNotCommitted() throws {
    let s = Ring(byteLimit: 1000)
    s.offer("K P P K")
    let info = SendRing.UnitInfo(
      kind: .video, pts: 9000, dts: 9000, isKeyframe: false, isLeading: true)
    #expect(s.ring.reserve(info, byteCount: 10) != nil)
    // The sender reconnects meanwhile: GOP 1 goes, and with it what GOP 2's RASL references.
    s.ring.skipToNewestKeyframe()
    #expect(!s.ring.commit())
    #expect(s.ring.drops[.video, .reconnect] == 4)
  }

  @Test func aReconnectDropsTheRASLPicturesOfTheKeyframeItSkipsTo() {
    let s = Ring(byteLimit: 1000)
    s.offer("K P P K r L P")
    s.ring.skipToNewestKeyframe()
    #expect(s.ring.drops[.video, .reconnect] == 4)
    #expect(s.drain() == "KLP")
  }
}
