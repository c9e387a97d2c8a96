import IngestCore
import Testing

@testable import IngestSinks

@Suite struct OutputTargetTests {
  @Test(arguments: [
    ("out.ts", OutputTarget.file(path: "out.ts", shaper: LinkShaper())),
    ("file:/tmp/x.bin", .file(path: "/tmp/x.bin", shaper: LinkShaper())),
    ("null:", .null(shaper: LinkShaper())),
    ("srt://127.0.0.1:9000?latency=200", .srt(url: "srt://127.0.0.1:9000?latency=200")),
    ("SRT://host:1", .srt(url: "SRT://host:1")),
    ("rtmp://h/app/key", .rtmp(url: "rtmp://h/app/key")),
    ("rtmps://h/app/key", .rtmp(url: "rtmps://h/app/key")),
    ("whip+http://127.0.0.1:8889/whip/a", .whip(url: "whip+http://127.0.0.1:8889/whip/a")),
    ("WHIP+HTTPS://h/w?token-file=/t", .whip(url: "WHIP+HTTPS://h/w?token-file=/t")),
    // A .m3u8 or .mp4 ending does not make a WHIP URL a file.
    ("whip+http://h/live.m3u8", .whip(url: "whip+http://h/live.m3u8")),
    ("hls:out/hls", .hls(directory: "out/hls", playlist: "index.m3u8")),
    ("rec/out.mp4", .mp4(path: "rec/out.mp4", quickTime: false)),
    ("file:Take 1.MOV", .mp4(path: "Take 1.MOV", quickTime: true)),
    ("out/live.m3u8", .hls(directory: "out", playlist: "live.m3u8")),
    ("live.m3u8", .hls(directory: ".", playlist: "live.m3u8")),
    ("/live.m3u8", .hls(directory: "/", playlist: "live.m3u8")),
    (
      "hls:out/hls?container=fmp4",
      .hls(directory: "out/hls", playlist: "index.m3u8", container: .fragmentedMP4)
    ),
    (
      "hls:a?container=ts",
      .hls(directory: "a", playlist: "index.m3u8", container: .transportStream)
    ),
    (
      "out/live.m3u8?container=fmp4",
      .hls(directory: "out", playlist: "live.m3u8", container: .fragmentedMP4)
    ),
    (
      "hls:rec?container=fmp4&audio=both",
      .hls(directory: "rec", playlist: "index.m3u8", container: .fragmentedMP4, audio: .both)
    ),
    ("hls:rec?audio=app", .hls(directory: "rec", playlist: "index.m3u8", audio: .app)),
    ("a?b/x.m3u8", .hls(directory: "a?b", playlist: "x.m3u8")),
  ])
  func parsesEachKind(text: String, expected: OutputTarget) throws {
    #expect(try OutputTarget(parsing: text) == expected)
  }

  @Test func simulatedLinkOptions() throws {
    let target = try OutputTarget(parsing: "slow.ts?rate=1.5M&stall=10s@500ms")
    #expect(
      target
        == .file(
          path: "slow.ts",
          shaper: LinkShaper(
            bitsPerSecond: 1_500_000, stallStart: .milliseconds(500), stallDuration: .seconds(10))))
    #expect(
      try OutputTarget(parsing: "null:?rate=800k")
        == .null(shaper: LinkShaper(bitsPerSecond: 800_000)))
  }

  @Test(arguments: [
    ("hls:", OutputURLError.missingPath("hls:")),
    ("out.mkv", .unknownScheme("out.mkv")),
    ("rec/.mp4", .missingPath("rec/.mp4")),
    ("srtt://host:1?passphrase=secret-secret", .unknownScheme("srtt://...")),
    ("null:x", .unexpected("x")),
    ("a.ts?rate=0", .badOption("rate=0")),
    ("a.ts?rate", .badOption("query item without '='")),
    ("a.ts?stall=10s", .badOption("stall=10s")),
    ("a.ts?speed=2", .unknownOption("speed")),
    ("a.ts?p%41ss=1", .unknownOption("query item")),
    ("?rate=1k", .missingPath("?...")),
    ("hls:out?container=mp4", .badContainer("mp4")),
    ("hls:?container=fmp4", .missingPath("hls:")),
    ("hls:out?audio=stereo", .badAudio("stereo")),
    ("hls:out?container=ts&audio=", .badAudio("")),
  ])
  func mistakesNameThePartWithoutSecrets(text: String, expected: OutputURLError) {
    #expect(throws: expected) { try OutputTarget(parsing: text) }
  }

  @Test func longQueryItemsAreNotQuotedWhole() {
    let item = "rate=" + String(repeating: "9", count: 40)
    #expect(throws: OutputURLError.badOption("rate=...")) {
      try OutputTarget(parsing: "a.ts?" + item)
    }
  }
}
