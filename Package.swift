// swift-tools-version:6.0
import PackageDescription

// The module graph (docs/architecture.md; Scripts/check-imports enforces it):
//
//   IngestCore  <- IngestPOSIX <- IngestFFmpeg
//               <- IngestSinks (file, null, output URLs)
//               <- IngestSRT, IngestRTMP, IngestHLS (one module per output family)
//               <- IngestCapture (media file -> samples)
//               <- IngestRuntime (builds a run: pipeline, sender threads, pacing, status, summary)
//               <- IngestBench (the benchmark harness, linked by the CLI only)
//               <- ingest (the CLI)
let package = Package(
  name: "BroadcastIngest",
  // Synchronization's Mutex and Atomic (IngestCore) and Int128 need these releases.
  platforms: [.macOS(.v15), .iOS(.v18)],
  products: [
    .library(name: "IngestCore", targets: ["IngestCore"]),
    .library(name: "IngestRuntime", targets: ["IngestRuntime"]),
    .executable(name: "ingest", targets: ["ingest"]),
  ],
  targets: [
    // Portable core: standard library and Synchronization only.
    .target(name: "IngestCore"),
    // Headers only: libavformat is loaded with dlopen on first use (capture, RTMP), because
    // linking it (and pkg-config's -lavformat) maps ~140 libraries and ~27 MB of resident memory
    // into every run. The headers live in the default multiarch include path.
    .systemLibrary(
      name: "CFFmpeg",
      providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev"])]
    ),
    .systemLibrary(
      name: "CSRT",
      pkgConfig: "srt",
      providers: [.apt(["libsrt-openssl-dev"])]
    ),
    .target(name: "IngestPOSIX", dependencies: ["IngestCore"]),
    .target(name: "IngestFFmpeg", dependencies: ["CFFmpeg"]),
    .target(name: "IngestSinks", dependencies: ["IngestCore", "IngestPOSIX"]),
    .target(name: "IngestSRT", dependencies: ["IngestCore", "IngestPOSIX", "CSRT"]),
    .target(
      name: "IngestRTMP", dependencies: ["IngestCore", "IngestPOSIX", "IngestFFmpeg", "CFFmpeg"]),
    .target(name: "IngestHLS", dependencies: ["IngestCore", "IngestPOSIX"]),
    .target(
      name: "IngestCapture",
      dependencies: ["IngestCore", "IngestPOSIX", "IngestFFmpeg", "CFFmpeg"]),
    .target(
      name: "IngestRuntime",
      dependencies: [
        "IngestCore", "IngestPOSIX", "IngestSinks", "IngestSRT", "IngestRTMP", "IngestHLS",
      ]),
    .target(
      name: "IngestBench",
      dependencies: ["IngestCore", "IngestPOSIX", "IngestSinks", "IngestSRT", "IngestRuntime"]),
    .executableTarget(
      name: "ingest",
      dependencies: [
        "IngestCore", "IngestPOSIX", "IngestSinks", "IngestHLS", "IngestCapture", "IngestRuntime",
        "IngestBench",
      ]),
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
    .testTarget(name: "IngestBenchTests", dependencies: ["IngestBench", "IngestTestSupport"]),
    .testTarget(name: "ingestTests", dependencies: ["ingest"]),
    .testTarget(
      name: "IntegrationTests",
      dependencies: [
        "IngestCore", "IngestPOSIX", "IngestSinks", "IngestSRT", "IngestRTMP", "IngestHLS",
        "IngestCapture", "IngestRuntime", "IngestBench", "IngestTestSupport",
      ]),
  ]
)
