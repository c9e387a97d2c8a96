// swift-tools-version:6.0
import PackageDescription

// The module graph (docs/architecture.md; Scripts/check-imports enforces it):
//
//   IngestCore  <- IngestPOSIX <- IngestFFmpeg
//               <- IngestSinks (file, null, output URLs)
//               <- IngestSRT, IngestRTMP, IngestHLS, IngestMP4 (one module per output family)
//               <- IngestCapture (media file -> samples)
//               <- IngestAudioMix (AAC decode, mix, encode for --audio mix; dlopen'ed libavcodec)
//               <- IngestRuntime (builds a run: pipeline, sender threads, pacing, status, summary)
//               <- IngestBench (the benchmark harness, linked by the CLI only)
//               <- IngestUpload (the host-app uploader: HLS directory -> HTTP PUT, libcurl)
//               <- IngestWHIP (the WHIP output's pipeline side) ... ingest-whip (webrtcbin, its
//                  own process: GStreamer never maps into the pipeline's)
//               <- ingest (the CLI)
//               <- IngestEncoder <- ingest-encode (the live encoder process; links libav*)
let package = Package(
  name: "BroadcastIngest",
  // Synchronization's Mutex and Atomic (IngestCore) and Int128 need these releases.
  platforms: [.macOS(.v15), .iOS(.v18)],
  products: [
    // What an iOS app (a Broadcast Upload Extension) adds: the engine docs/embedding.md shows,
    // with the core, the HLS and MP4 writers and the portable POSIX layer. No C target, no
    // system library (EngineProductTests checks the closure and builds a consumer against it).
    .library(name: "IngestEngine", targets: ["IngestEngine", "IngestMP4"]),
    .library(name: "IngestCore", targets: ["IngestCore"]),
    // Linux only from here: IngestRuntime and the executables need libsrt, libavformat,
    // libavcodec, libcurl and GStreamer, which no iOS SDK has.
    .library(name: "IngestRuntime", targets: ["IngestRuntime"]),
    .executable(name: "ingest", targets: ["ingest"]),
    .executable(name: "ingest-encode", targets: ["ingest-encode"]),
    .executable(name: "ingest-upload", targets: ["ingest-upload"]),
    .executable(name: "ingest-whip", targets: ["ingest-whip"]),
  ],
  targets: [
    // Portable core: standard library and Synchronization only.
    .target(name: "IngestCore"),
    // Headers only: libavformat is loaded with dlopen on first use (capture, RTMP), because
    // linking it (and pkg-config's -lavformat) maps ~140 libraries and ~27 MB of resident memory
    // into every run. The headers live in the default multiarch include path.
    .systemLibrary(
      name: "CFFmpeg",
      providers: [
        .apt(["libavformat-dev", "libavcodec-dev", "libswresample-dev", "libavutil-dev"])
      ]
    ),
    // libsrt is loaded with dlopen(RTLD_LOCAL) on first use, like libavformat (see
    // CSRT/include/shim.h), so that it and the GnuTLS libsrt that libavformat depends on never
    // share the global symbol scope; csrt.c holds the process's one handle. Headers from
    // libsrt-openssl-dev.
    .target(name: "CSRT"),
    // Linked, for the encoder process only (never the `ingest` binary, see CFFmpeg above).
    .systemLibrary(
      name: "CFFmpegEncoder",
      providers: [
        .apt([
          "libavdevice-dev", "libavfilter-dev", "libavformat-dev", "libavcodec-dev",
          "libswscale-dev", "libswresample-dev", "libavutil-dev",
        ])
      ]
    ),
    // C source, not a system library: CRC-32/MPEG-2 by carry-less multiplication.
    .target(name: "CChecksum"),
    // Headers only: a typed wrapper for prctl (variadic), which is in the C library.
    .systemLibrary(name: "CProcessControl"),
    // Portable POSIX: file writing, the monotonic clock, threads and locks (Linux and Darwin
    // alike, no C target); what the engine product holds.
    .target(name: "IngestPlatform", dependencies: ["IngestCore"]),
    // Linux only: process probes (/proc), spawning, signals, core-dump control, the dump
    // reader's hardware checksum; re-exports IngestPlatform.
    .target(
      name: "IngestPOSIX",
      dependencies: ["IngestCore", "IngestPlatform", "CChecksum", "CProcessControl"]),
    .target(name: "IngestFFmpeg", dependencies: ["CFFmpeg"]),
    .target(name: "IngestSinks", dependencies: ["IngestCore", "IngestPOSIX"]),
    .target(name: "IngestSRT", dependencies: ["IngestCore", "IngestPOSIX", "CSRT"]),
    .target(
      name: "IngestRTMP", dependencies: ["IngestCore", "IngestPOSIX", "IngestFFmpeg", "CFFmpeg"]),
    .target(name: "IngestHLS", dependencies: ["IngestCore", "IngestPlatform"]),
    // AAC decode, resample and encode for `--audio mix`, through the dlopen'ed libavcodec.
    .target(name: "IngestAudioMix", dependencies: ["IngestCore", "CFFmpeg"]),
    .target(name: "IngestMP4", dependencies: ["IngestCore", "IngestPlatform"]),
    // The engine a Broadcast Upload Extension embeds (docs/embedding.md includes its file).
    .target(name: "IngestEngine", dependencies: ["IngestCore", "IngestPlatform", "IngestHLS"]),
    .target(
      name: "IngestCapture",
      dependencies: ["IngestCore", "IngestPOSIX", "IngestFFmpeg", "CFFmpeg"]),
    .target(
      name: "IngestRuntime",
      dependencies: [
        "IngestCore", "IngestPOSIX", "IngestSinks", "IngestSRT", "IngestRTMP", "IngestHLS",
        "IngestMP4", "IngestAudioMix", "IngestWHIP",
      ]),
    .systemLibrary(
      name: "CCurl",
      pkgConfig: "libcurl",
      providers: [.apt(["libcurl4-openssl-dev"])]
    ),
    .target(
      name: "IngestUpload", dependencies: ["IngestCore", "IngestPOSIX", "IngestHLS", "CCurl"]),
    // GStreamer's webrtcbin and what it needs, for `ingest-whip` only (see IngestWHIP).
    .systemLibrary(
      name: "CGStreamer",
      pkgConfig: "gstreamer-webrtc-1.0",
      providers: [
        .apt([
          "libgstreamer1.0-dev", "libgstreamer-plugins-base1.0-dev",
          "libgstreamer-plugins-bad1.0-dev",
        ])
      ]
    ),
    // Transport-wide congestion control feedback parsed (plain C), for `ingest-whip`'s RTCP
    // thread and the unit tests.
    .target(name: "CTransportCC"),
    // The WHIP output's pipeline side: spawns `ingest-whip`, feeds it access units, reads its
    // statistics. No GStreamer here: that stays in the child.
    .target(name: "IngestWHIP", dependencies: ["IngestCore", "IngestPOSIX"]),
    // WebRTC (GLib, GStreamer, libnice, libcurl) in a program of its own, like the uploader.
    .executableTarget(
      name: "ingest-whip",
      dependencies: ["IngestCore", "IngestPOSIX", "CGStreamer", "CCurl", "CTransportCC"]),
    .target(
      name: "IngestBench",
      dependencies: ["IngestCore", "IngestPOSIX", "IngestSinks", "IngestSRT", "IngestRuntime"]),
    // Command-line plumbing shared by the executables: arguments, console, command dispatch.
    .target(name: "IngestCLI", dependencies: ["IngestPOSIX"]),
    .executableTarget(
      name: "ingest",
      dependencies: [
        "IngestCore", "IngestPOSIX", "IngestSinks", "IngestHLS", "IngestMP4", "IngestCapture",
        "IngestRuntime", "IngestBench", "IngestCLI",
      ]),
    // The uploader links libcurl, so it is a program of its own that `ingest upload` runs: the
    // pipeline's process never maps libcurl and its libraries.
    .executableTarget(
      name: "ingest-upload",
      dependencies: ["IngestCore", "IngestPOSIX", "IngestUpload", "IngestCLI"]),
    .target(
      name: "IngestEncoder", dependencies: ["IngestCore", "IngestPOSIX", "CFFmpegEncoder"]),
    .executableTarget(
      name: "ingest-encode", dependencies: ["IngestEncoder", "IngestPOSIX", "IngestCLI"]),
    .target(
      name: "IngestTestSupport", dependencies: ["IngestCore", "IngestPOSIX"],
      path: "Tests/IngestTestSupport"),
    .testTarget(name: "IngestCoreTests", dependencies: ["IngestCore", "IngestTestSupport"]),
    .testTarget(name: "IngestPOSIXTests", dependencies: ["IngestPOSIX", "IngestTestSupport"]),
    .testTarget(name: "IngestSinksTests", dependencies: ["IngestSinks", "IngestTestSupport"]),
    .testTarget(name: "IngestSRTTests", dependencies: ["IngestSRT", "IngestTestSupport"]),
    .testTarget(name: "IngestRTMPTests", dependencies: ["IngestRTMP", "IngestTestSupport"]),
    .testTarget(name: "IngestHLSTests", dependencies: ["IngestHLS", "IngestTestSupport"]),
    .testTarget(name: "IngestCaptureTests", dependencies: ["IngestCapture", "IngestTestSupport"]),
    .testTarget(
      name: "IngestRuntimeTests", dependencies: ["IngestRuntime", "IngestTestSupport"]),
    .testTarget(name: "IngestUploadTests", dependencies: ["IngestUpload", "IngestTestSupport"]),
    .testTarget(
      name: "IngestWHIPTests", dependencies: ["IngestWHIP", "IngestTestSupport", "CTransportCC"]),
    .testTarget(name: "IngestCLITests", dependencies: ["IngestCLI"]),
    // ingest-whip's delivery bookkeeping (delivery.h) on hand-made RTP packets.
    .testTarget(name: "CGStreamerTests", dependencies: ["CGStreamer", "CTransportCC"]),
    // ingest-whip's own types that need no pipeline (multicast DNS for `.local` candidates).
    .testTarget(name: "IngestWHIPChildTests", dependencies: ["ingest-whip"]),
    .testTarget(
      name: "IngestEncoderTests",
      dependencies: ["IngestEncoder", "IngestCore", "IngestTestSupport"]),
    // docs/embedding.md's portable part, run on the live encoder's samples: public API only.
    .testTarget(
      name: "EmbeddingTests",
      dependencies: ["IngestEngine", "IngestCore", "IngestPOSIX", "IngestTestSupport"]),
    .testTarget(
      name: "IntegrationTests",
      dependencies: [
        "IngestCore", "IngestPOSIX", "IngestSinks", "IngestSRT", "IngestRTMP", "IngestHLS",
        "IngestMP4", "IngestCapture", "IngestRuntime", "IngestBench", "IngestWHIP",
        "IngestTestSupport",
      ]),
  ]
)
