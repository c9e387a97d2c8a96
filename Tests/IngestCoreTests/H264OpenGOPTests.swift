import Testing

@testable import IngestCore

/// Open H.264 GOPs: a keyframe that is an I picture but no IDR (a recovery point) may be
/// followed in decoding order by leading pictures, shown before it, that reference the GOP
/// before. A decoder that goes on after a loss cannot resume at one (it keeps pictures whose
/// memory-management commands the pictures after it do not expect), so the ring takes such a
/// keyframe as one only where the stream starts, and then drops its leading pictures; video
/// resumes at an IDR.
@Suite struct H264OpenGOPTests {
  typealias F = CoreFixtures

  /// A pipeline fed H.264 access units by a script of pictures in decoding order: `I` IDR, `K`
  /// recovery-point I picture (non-IDR, flagged as a keyframe), `P` referenced picture shown
  /// after the pictures before it, `b` B picture shown just before the preceding `K` or `P`.
  private final class Feed {
    let pipeline: Pipeline
    private var frame: Int64 = 0
    private var lastAnchorPTS: Int64 = 0
    private var bRun: Int64 = 0

    init() throws {
      (pipeline, _) = try makePipeline(tracks: TrackFormats(video: F.h264))
    }

    /// Appends each picture of `script`; times are in tenths of a frame.
    func append(_ script: String) {
      for symbol in script where symbol != " " {
        // Anchors (I, K, P) show three frames after they are decoded; each `b` just before the
        // newest anchor, and after the one before it.
        let pts: Int64
        if symbol == "b" {
          pts = lastAnchorPTS - 5 - bRun
          bRun += 1
        } else {
          pts = frame * 10 + 30
          lastAnchorPTS = pts
          bRun = 0
        }
        let payload: [UInt8] =
          switch symbol {
          case "I": F.idr()
          case "b": F.avcc(header: 0x21)
          default: F.pFrame()
          }
        pipeline.append(
          MediaSample(
            kind: .video, pts: MediaTime(value: pts * 2, timescale: 600),
            dts: MediaTime(value: frame * 20, timescale: 600),
            isKeyframe: symbol == "I" || symbol == "K", payload: payload))
        frame += 1
      }
    }

    /// Units sent: `K` a keyframe for the ring, `L` a leading picture, `-` any other.
    func drain() -> String {
      var sent = ""
      while let unit = pipeline.beginSend() {
        sent.append(unit.info.isKeyframe ? "K" : unit.info.isLeading ? "L" : "-")
        pipeline.completeSend(unit, bytes: unit.slot.count)
      }
      return sent
    }

    var drops: DropCounts { pipeline.snapshot().drops }
  }

  @Test func aRecoveryPointMidStreamIsNoKeyframeAndLeadsNothing() throws {
    let feed = try Feed()
    feed.append("I P b b K b b P b I b")
    #expect(feed.drain() == "K--------K-")
    #expect(feed.drops.total == 0)
  }

  @Test func aStreamThatStartsAtARecoveryPointDropsItsLeadingPictures() throws {
    let feed = try Feed()
    feed.append("K b b P b K b P I b P")
    #expect(feed.drain() == "K-----K--")
    #expect(feed.drops[.video, .awaitingKeyframe] == 2)
    #expect(feed.drops.total == 2)
  }

  @Test func afterALossVideoResumesAtAnIDRNotAtARecoveryPoint() throws {
    let feed = try Feed()
    feed.append("I P")
    feed.pipeline.sampleLost(.video)
    feed.append("P b K b b P b I b P")
    // The rest of GOP 1 (P b), the recovery point and its GOP (K b b P b) wait for the IDR.
    #expect(feed.drain() == "K-K--")
    #expect(feed.drops[.video, .awaitingKeyframe] == 7)
    #expect(feed.drops.total == 7)
  }
}
