import IngestCore
import IngestSinks

/// The rate controller's configuration for `ingest live`, by the network output it drives: what
/// rides on the link beside the video (the audio that output carries) and its framing, and how
/// far a climb may go where congestion shows late.
public enum LiveRateConfiguration {
  /// The configuration for a stream of `nominalBitsPerSecond` video (never under
  /// `floorBitsPerSecond` at `nominalFrameRate`, nor under its bits per frame at a lower one)
  /// at `nominalFrameRate`, with `audioTracks` AAC tracks of
  /// `audioBitsPerSecond` from the encoder, sent to `output` (the run's network output).
  public static func make(
    nominalBitsPerSecond: Int, floorBitsPerSecond: Int, nominalFrameRate: Int,
    audioBitsPerSecond: Int, audioTracks: Int, output: OutputTarget?
  ) -> RateController.Configuration {
    var configuration = RateController.Configuration(nominalBitsPerSecond: nominalBitsPerSecond)
    configuration.floorBitsPerSecond = floorBitsPerSecond
    // Audio rides on the same link: each track at its bitrate, plus 15 % of framing.
    func framed(_ bitsPerSecond: Int) -> Int { bitsPerSecond * 115 / 100 }
    configuration.fixedBitsPerSecond = framed(audioTracks * audioBitsPerSecond)
    switch output {
    case .rtmp:
      // FLV carries one audio track (the two mixed, or the one asked for), and its framing
      // is a tag header a frame and the chunks' headers, some 2 % of the video, not TS and
      // SRT's 8 %. Counted as two tracks in TS, the video a link of half the nominal rate
      // carried read 18 % low, and a cut after a probe, meant to go to 85 % of it, went to
      // 70 %: the video's bit rate sawed between 0.75 and 1.3 Mb/s.
      configuration.fixedBitsPerSecond = framed(audioBitsPerSecond)
      configuration.framingShare = 0.02
      // What the socket acknowledged over a second swings by half either way: the start-up's
      // cut on a low reading (0.77 Mb/s on a 1.3 Mb/s link) left a ceiling of 0.61, the next
      // reading disproved it, and with no ceiling the climb went to the nominal rate and
      // through the link's queue (the video 42 to 47 % under its median at 10 s in two runs of
      // three). Disproved, the ceiling rises to what the link carried.
      configuration.forgetsDisprovedCeiling = false
    case .whip:
      // WHIP carries one Opus track at 64 kb/s (ingest-whip mixes and re-encodes), not the
      // AAC tracks: counting those would leave the controller thinking the link carries a
      // few hundred kb/s less video than it does, and cut to the floor for nothing.
      configuration.fixedBitsPerSecond = framed(64_000)
      // Its link shows congestion only in the receiver's reports, about a second late, and
      // webrtcbin does not pace (a keyframe leaves as one burst): the target climbs at most
      // 5 % above the video that got through, so a bottleneck's queue grows slowly enough
      // for the reports to show it before it overflows. With 1.5 the climb overshot a
      // half-rate link by 40 % and lost a tenth of the frames; with 15 %, aiortc lost
      // frames for seconds in one run of three through half the nominal rate (89 % and
      // 92 % decoded), in the start-up climb and after a cut (docs/whip.md).
      configuration.increaseLimitOfDelivered = 1.05
      // Until the first congestion, 15 % above it a step while the newest report shows no
      // queue: from the start share (40 %) steps within 5 % took 20 s and more to the
      // nominal rate, and a path that loses 2 % with a 100 ms round trip carried 55 to 65 %
      // of it to aiortc over 45 s (84 % with this). With 25 %, the start-up went up to a
      // fifth past the half-rate link before the reports showed it, and aiortc lost frames
      // for seconds in about half the runs; a queue in the newest report and the lower
      // threshold (below) are what warn of a bottleneck.
      configuration.startupIncreaseLimitOfDelivered = 1.15
      configuration.increaseNeedsClearReading = true
      // Congested from a queue of 50 ms, half SRT's 100 (an eighth of the 400 ms latency the
      // WHIP link estimate gives): the reports' round trip is the only warning of a
      // bottleneck there is, a second apart. Through the half-rate link the start-up climb's
      // queue read 72 ms a second before it was 322 ms and losing.
      configuration.congestedQueueMilliseconds = 50
      configuration.congestedQueueShare = 0.125
      // A probe step is taken back when the queue grew by 25 ms, not 10: the reports' round
      // trip alone moves by 10 to 20 ms from one to the next (aiortc's at a 100 ms path read
      // 102, 123, 105 and 115 ms), and at 10 a step was taken back for that noise.
      configuration.probeQueueGrowthMilliseconds = 25
      // RTP's framing is its 12-byte header and a byte or two of fragmentation a packet
      // (some 1.5 % at the 1200-byte MTU), not the TS and SRT headers of the default: with
      // those, each step of the climb above counted about 6 % less video than got through.
      configuration.framingShare = 0.02
    default: break
    }
    configuration.nominalFrameRate = nominalFrameRate
    configuration.reducedFrameRates = configuration.reducedFrameRates.filter {
      $0 < configuration.nominalFrameRate
    }
    return configuration
  }
}
