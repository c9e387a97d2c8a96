// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "BroadcastIngest",
  products: [
    .library(name: "IngestCore", targets: ["IngestCore"]),
    .library(name: "IngestOutputs", targets: ["IngestOutputs"]),
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
    .target(name: "IngestOutputs", dependencies: ["IngestCore", "CFFmpeg", "CSRT"]),
    .executableTarget(name: "ingest", dependencies: ["IngestCore", "IngestOutputs"]),
    .testTarget(name: "IngestCoreTests", dependencies: ["IngestCore"]),
    .testTarget(name: "IngestOutputsTests", dependencies: ["IngestOutputs", "IngestCore"]),
    .testTarget(name: "IntegrationTests", dependencies: ["IngestCore", "IngestOutputs"]),
  ]
)
