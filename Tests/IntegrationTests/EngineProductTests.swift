import Foundation
import IngestTestSupport
import Testing

/// The IngestEngine product is what an iOS app adds: its closure holds Swift targets only (no
/// C target, no system library: an iOS SDK has no libsrt or libavformat), and a package that
/// depends on it alone builds with the engine docs/embedding.md shows.
@Suite struct EngineProductTests {
  /// The targets the product's targets depend on, transitively, with their module types.
  static func closure(of product: String) throws -> [String: String] {
    let describe = try CommandRunner.run(
      "swift",
      [
        "package", "--package-path", CommandRunner.packageRoot.path, "describe",
        "--type", "json",
      ])
    guard describe.status == 0,
      let start = describe.stdout.firstIndex(of: "{"),
      let package = try JSONSerialization.jsonObject(
        with: Data(describe.stdout[start...].utf8)) as? [String: Any],
      let targets = package["targets"] as? [[String: Any]],
      let products = package["products"] as? [[String: Any]],
      let roots = products.first(where: { $0["name"] as? String == product })?["targets"]
        as? [String]
    else { throw LoopbackServers.Failure("swift package describe: \(describe.stderr)") }
    var byName: [String: [String: Any]] = [:]
    for target in targets { if let name = target["name"] as? String { byName[name] = target } }
    var found: [String: String] = [:]
    var queue = roots
    while let name = queue.popLast() {
      guard found[name] == nil, let target = byName[name] else { continue }
      found[name] = target["module_type"] as? String ?? "?"
      queue += target["target_dependencies"] as? [String] ?? []
    }
    return found
  }

  @Test func theEngineProductHoldsSwiftTargetsOnly() throws {
    let closure = try Self.closure(of: "IngestEngine")
    #expect(
      Set(closure.keys) == [
        "IngestEngine", "IngestCore", "IngestPlatform", "IngestHLS", "IngestMP4",
      ],
      "\(closure)")
    #expect(closure.values.allSatisfy { $0 == "SwiftTarget" }, "\(closure)")
  }

  /// A consumer package of its own, depending on the product alone, builds the page's engine
  /// into a program and runs it: the formats and times an extension hands it are taken.
  @Test func aConsumerPackageBuildsWithTheProductAlone() throws {
    let consumer = try CommandRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: consumer) }
    let sources = consumer.appending(path: "Sources/Extension")
    try FileManager.default.createDirectory(at: sources, withIntermediateDirectories: true)
    let manifest = """
      // swift-tools-version:6.0
      import PackageDescription
      let package = Package(
        name: "Extension",
        platforms: [.macOS(.v15), .iOS(.v18)],
        dependencies: [.package(path: "\(CommandRunner.packageRoot.path)")],
        targets: [
          .executableTarget(
            name: "Extension",
            dependencies: [.product(name: "IngestEngine", package: "\(CommandRunner.packageRoot.lastPathComponent)")])
        ])
      """
    try manifest.write(
      to: consumer.appending(path: "Package.swift"), atomically: true, encoding: .utf8)
    let program = """
      import IngestCore
      import IngestEngine
      let time = BroadcastEngine.mediaTime(value: 1_001, timescale: 30_000)
      let format = try BroadcastEngine.audioFormat(audioSpecificConfig: [0x11, 0x90])
      print("engine", time.value, time.timescale, format)
      """
    try program.write(
      to: sources.appending(path: "main.swift"), atomically: true, encoding: .utf8)
    let build = try CommandRunner.run(
      "swift", ["build", "--package-path", consumer.path, "--product", "Extension"],
      timeout: 1800)
    #expect(build.status == 0, "\(build.stdout)\n\(build.stderr)")
    // Nothing but the engine's closure was compiled: no C module, no system library.
    for module in ["CSRT", "CFFmpeg", "CChecksum", "IngestPOSIX", "IngestRuntime"] {
      #expect(!build.stdout.contains("Compiling \(module)"), "\(module) built: \(build.stdout)")
    }
    let run = try CommandRunner.run(
      consumer.appending(path: ".build/debug/Extension").path, [])
    #expect(run.status == 0, "\(run.stderr)")
    #expect(run.stdout.hasPrefix("engine 1001 30000"), "\(run.stdout)")
  }
}
