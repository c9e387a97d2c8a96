import IngestCore
import IngestSinks
import Testing

@testable import IngestRuntime

/// What `ingest live` tells the rate controller rides on the link beside the video, by output.
@Suite struct LiveRateConfigurationTests {
  private func configuration(_ output: OutputTarget?, tracks: Int = 2, frameRate: Int = 30)
    -> RateController.Configuration
  {
    LiveRateConfiguration.make(
      nominalBitsPerSecond: 2_000_000, floorBitsPerSecond: 300_000, nominalFrameRate: frameRate,
      audioBitsPerSecond: 128_000, audioTracks: tracks, output: output)
  }

  /// SRT carries the encoder's AAC tracks in TS: each counts, with TS and SRT's framing.
  @Test func srtCountsEveryAACTrack() {
    let srt = configuration(.srt(url: "srt://127.0.0.1:9000"))
    #expect(srt.fixedBitsPerSecond == 2 * 128_000 * 115 / 100)
    #expect(srt.framingShare == 0.08)
    #expect(srt.increaseLimitOfDelivered == nil)
    #expect(configuration(.srt(url: "srt://h:1"), tracks: 1).fixedBitsPerSecond == 147_200)
  }

  /// FLV has one audio track (the two are mixed) and little framing: counted as two tracks
  /// in TS, the video a half-rate link carried read 18 % low.
  @Test func rtmpCountsOneTrackAndItsFraming() {
    let rtmp = configuration(.rtmp(url: "rtmp://127.0.0.1/live/key"))
    #expect(rtmp.fixedBitsPerSecond == 128_000 * 115 / 100)
    #expect(rtmp.framingShare == 0.02)
  }

  /// WHIP carries one Opus track at 64 kb/s, and climbs within 5 % of what got through.
  @Test func whipCountsItsOpusTrackAndClimbsNearWhatGotThrough() {
    let whip = configuration(.whip(url: "whip+http://127.0.0.1:8080/whip"))
    #expect(whip.fixedBitsPerSecond == 64_000 * 115 / 100)
    #expect(whip.framingShare == 0.02)
    #expect(whip.increaseLimitOfDelivered == 1.05)
    #expect(whip.probeQueueGrowthMilliseconds == 25)
  }

  /// The ladder's frame rates stay under the nominal one.
  @Test func reducedFrameRatesStayUnderTheNominal() {
    let srt = configuration(.srt(url: "srt://h:1"), frameRate: 20)
    #expect(srt.nominalFrameRate == 20)
    #expect(srt.reducedFrameRates == [15])
    #expect(srt.floorBitsPerSecond == 300_000)
    #expect(configuration(.srt(url: "srt://h:1")).reducedFrameRates == [24, 20, 15])
  }
}
