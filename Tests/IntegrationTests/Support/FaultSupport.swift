import Foundation
import Glibc
import IngestCore
import IngestPOSIX
import IngestTestSupport

/// What the fault-injection and secrets tests share: listeners started by pid (optionally in a
/// network namespace), an `ingest` run in the background, status-file reading, the summary's
/// accounts, and dumps built from the fixtures.
enum FaultSupport {
  /// Runs a tool to completion; its exit status and what it printed.
  @discardableResult
  static func tool(_ arguments: [String]) throws -> CommandRunner.Result {
    try CommandRunner.run(arguments[0], Array(arguments.dropFirst()), timeout: 30)
  }

  /// Calls `condition` until it holds or `seconds` pass; whether it held. For conditions on
  /// files another process writes (status events), where there is nothing to wait on.
  static func waitUntil(seconds: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
      if condition() { return true }
      usleep(50_000)
    }
    return condition()
  }

  /// The JSON objects of a status file, in order (a partly written last line is left out).
  static func statusEvents(_ path: String) -> [[String: Any]] {
    guard let data = FileManager.default.contents(atPath: path) else { return [] }
    return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { line in
      try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
    }
  }

  /// How many status events named `name` the file holds.
  static func count(_ name: String, in path: String) -> Int {
    statusEvents(path).filter { $0["event"] as? String == name }.count
  }

  /// Writes `copies` back-to-back copies of a fixture's samples and events as one dump, each copy
  /// shifted by the fixture's length (plus a frame), so a short fixture makes a long live run.
  static func loopedDump(_ fixture: String, copies: Int, to path: String) throws {
    var reader = DumpReader(source: try FileByteSource(path: CommandRunner.fixture(fixture)))
    var records: [(DumpRecord, MediaSample?)] = []
    var first = Int64.max
    var last = Int64.min
    while let record = try reader.next() {
      let sample = reader.sampleCopy()
      if let sample {
        // Host-clock values times 10^9 overflow Int64; a Double is exact enough for a shift.
        let nanos = Int64(Double(sample.pts.value) / Double(sample.pts.timescale) * 1e9)
        first = min(first, nanos)
        last = max(last, nanos)
      }
      records.append((record, sample))
    }
    let period = last - first + 40_000_000
    var writer = try DumpWriter(sink: try FileWriter(path: path))
    for copy in 0..<copies {
      let shift = Int64(copy) * period
      func moved(_ time: MediaTime) -> MediaTime {
        MediaTime(
          value: time.value + Int64((Double(shift) * Double(time.timescale) / 1e9).rounded()),
          timescale: time.timescale)
      }
      for (record, sample) in records {
        switch record {
        case .format(let kind, let format):
          if copy == 0 { try writer.writeFormat(format, for: kind) }
        case .event(.audioInterruptionBegan(let kind, let time)):
          try writer.writeEvent(.audioInterruptionBegan(kind, at: moved(time)))
        case .event(.audioInterruptionEnded(let kind, let time)):
          try writer.writeEvent(.audioInterruptionEnded(kind, at: moved(time)))
        case .sample:
          guard var sample else { continue }
          sample.pts = moved(sample.pts)
          sample.dts = sample.dts.map(moved)
          try writer.writeSample(sample)
        }
      }
    }
    try writer.sink.close()
  }

  /// The byte offsets and types of a dump's records (12-byte header, then type, u32 LE length,
  /// payload, CRC).
  static func records(of dump: [UInt8]) -> [(offset: Int, type: UInt8, length: Int)] {
    var result: [(Int, UInt8, Int)] = []
    var offset = DumpFormat.headerSize
    while offset + 9 <= dump.count {
      var length = 0
      for index in 0..<4 { length |= Int(dump[offset + 1 + index]) << (8 * index) }
      guard offset + 9 + length <= dump.count else { break }
      result.append((offset, dump[offset], length))
      offset += 9 + length
    }
    return result
  }

  /// Rewrites the CRC of the record at `offset`, so a change inside it reaches the decoder.
  static func fixCRC(_ dump: inout [UInt8], recordAt offset: Int, length: Int) {
    let end = offset + 5 + length
    let crc = MPEGCRC32.checksum(dump[offset..<end])
    for index in 0..<4 { dump[end + index] = UInt8(truncatingIfNeeded: crc >> (8 * index)) }
  }
}

enum FaultError: Error, CustomStringConvertible {
  case failed(String)

  var description: String {
    switch self {
    case .failed(let text): text
    }
  }
}

/// The accounts of a run's `--json` summary: every appended sample is sent, dropped (after the
/// ring took it) or rejected (refused before), or still undelivered at the end.
struct ReplayAccounts: CustomStringConvertible {
  var appended: [String: Int]
  var sent: [String: Int]
  /// Drops and refusals by track, then reason.
  var drops: [String: [String: Int]]
  var dropped: Int
  var undelivered: Int
  var peakLedger: Int
  var budget: Int
  var ok: Bool
  var readError: String?
  var sinkError: String?
  var skippedRecords: Int
  /// Dump records the reader refused (their samples never reached the pipeline).
  var invalidRecords: Int

  static let refusals: Set<String> = ["ringFull", "invalid"]

  init?(json: String) {
    guard let line = json.split(separator: "\n").last(where: { $0.hasPrefix("{") }),
      let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
      let appended = object["appended"] as? [String: Int],
      let sent = object["sent"] as? [String: Int],
      let dropped = object["dropped"] as? Int, let undelivered = object["undelivered"] as? Int,
      let peak = object["peak_ledger"] as? Int, let budget = object["budget"] as? Int
    else { return nil }
    self.appended = appended
    self.sent = sent
    self.drops = (object["drops"] as? [String: [String: Int]]) ?? [:]
    self.dropped = dropped
    self.undelivered = undelivered
    self.peakLedger = peak
    self.budget = budget
    self.ok = object["ok"] as? Bool ?? false
    self.readError = object["read_error"] as? String
    self.sinkError = object["sink_error"] as? String
    self.skippedRecords = object["skipped_records"] as? Int ?? 0
    self.invalidRecords = object["invalid_records"] as? Int ?? 0
  }

  var totalAppended: Int { appended.values.reduce(0, +) }
  var totalSent: Int { sent.values.reduce(0, +) }
  /// Drops by reason (after the ring took the sample), all tracks together.
  var droppedByReason: [String: Int] { byReason { !Self.refusals.contains($0) } }
  /// Refusals by reason (before the ring took the sample).
  var rejectedByReason: [String: Int] { byReason { Self.refusals.contains($0) } }

  private func byReason(_ include: (String) -> Bool) -> [String: Int] {
    var result: [String: Int] = [:]
    for reasons in drops.values {
      for (reason, count) in reasons where include(reason) { result[reason, default: 0] += count }
    }
    return result
  }

  /// appended = sent + dropped + rejected (+ undelivered), and the reasons add up to `dropped`.
  var closes: Bool {
    let byReason = drops.values.flatMap(\.values).reduce(0, +)
    return byReason == dropped && totalAppended == totalSent + dropped + undelivered
  }

  var description: String {
    func list(_ counts: [String: Int]) -> String {
      counts.isEmpty
        ? "none"
        : counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
          .joined(separator: ", ")
    }
    let rejected = rejectedByReason.values.reduce(0, +)
    return "appended \(totalAppended) = sent \(totalSent) + dropped \(dropped - rejected) ("
      + list(droppedByReason) + ") + rejected \(rejected) (" + list(rejectedByReason)
      + ") + undelivered \(undelivered); peak ledger \(peakLedger) of \(budget)"
      + (skippedRecords > 0 ? "; \(skippedRecords) dump records of unknown type skipped" : "")
      + (invalidRecords > 0 ? "; \(invalidRecords) dump records refused by the reader" : "")
  }
}

/// `ingest` running on its own thread while a test breaks things around it.
final class BackgroundIngest: @unchecked Sendable {
  private let done = DispatchSemaphore(value: 0)
  private var outcome: Result<CommandRunner.Result, Error>?

  init(_ arguments: [String], timeout: TimeInterval) {
    Thread.detachNewThread { [self] in
      outcome = Result { try CommandRunner.ingest(arguments, timeout: timeout) }
      done.signal()
    }
  }

  /// Waits for the run to end (the runner's own timeout bounds it).
  func wait() throws -> CommandRunner.Result {
    done.wait()
    done.signal()
    return try outcome!.get()
  }
}

/// An `srt-live-transmit` listener writing what it receives to a file, started by pid (inside a
/// network namespace when `namespace` is given) and stopped by pid.
final class SRTPeer {
  let port: UInt16
  let output: URL
  private let process = Process()
  private let exited = DispatchSemaphore(value: 0)

  init(
    port: UInt16, output: URL, bind: String = "127.0.0.1", passphrase: String? = nil,
    namespace: String? = nil
  ) throws {
    self.port = port
    self.output = output
    var url = "srt://\(bind):\(port)?mode=listener"
    if let passphrase { url += "&passphrase=\(passphrase)" }
    let command = ["srt-live-transmit", "-a:no", "-v", url, "file://con"]
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = (namespace.map { ["ip", "netns", "exec", $0] } ?? []) + command
    _ = FileManager.default.createFile(atPath: output.path, contents: nil)
    process.standardOutput = try FileHandle(forWritingTo: output)
    process.standardInput = FileHandle.nullDevice
    let errors = Pipe()
    process.standardError = errors
    process.terminationHandler = { [exited] _ in exited.signal() }
    try process.run()
    // Ready when it prints " listen..."; end of file first means it died (port taken, bad args).
    var seen = Data()
    let reader = errors.fileHandleForReading
    while !String(decoding: seen, as: UTF8.self).contains(" listen...") {
      let chunk = reader.availableData
      if chunk.isEmpty {
        throw FaultError.failed("listener exited: \(String(decoding: seen, as: UTF8.self))")
      }
      seen.append(chunk)
    }
    reader.readabilityHandler = { handle in
      if handle.availableData.isEmpty { handle.readabilityHandler = nil }
    }
  }

  deinit { stop(signal: SIGKILL) }

  /// Sends `signal` to the listener's pid and waits for it to exit.
  func stop(signal: Int32) {
    guard process.isRunning else { return }
    Glibc.kill(process.processIdentifier, signal)
    if exited.wait(timeout: .now() + 10) == .timedOut {
      Glibc.kill(process.processIdentifier, SIGKILL)
      exited.wait()
    }
    exited.signal()
  }
}

/// A network namespace joined to the root namespace by a veth pair: a peer behind a link the
/// test can take down or throttle. Removed (with its link) by `remove()` or on deinit.
final class LinkedNamespace {
  let name: String
  /// The root-namespace end of the link, where `tc` and `ip link set` act.
  let hostInterface: String
  let hostAddress: String
  let peerAddress: String
  private var removed = false

  /// Creates the namespace, or returns nil when this process may not (not root, no `ip`).
  /// - Parameter subnet: the first three octets of the link's /30 (default `10.213.TAG`).
  init?(tag: Int, subnet: String? = nil) {
    let suffix = "\(getpid() % 10000)\(tag)"
    name = "ingest-fault-\(suffix)"
    hostInterface = "vif\(suffix)"
    let peerInterface = "vpf\(suffix)"
    // A /30 of our own, only inside this machine: the peer lives in the namespace made here.
    hostAddress = "\(subnet ?? "10.213.\(tag)").1"
    peerAddress = "\(subnet ?? "10.213.\(tag)").2"
    Self.removeStaleLink(holding: hostAddress)
    let steps: [[String]] = [
      ["ip", "netns", "add", name],
      ["ip", "link", "add", hostInterface, "type", "veth", "peer", "name", peerInterface],
      ["ip", "link", "set", peerInterface, "netns", name],
      ["ip", "addr", "add", "\(hostAddress)/30", "dev", hostInterface],
      ["ip", "link", "set", hostInterface, "up"],
      [
        "ip", "netns", "exec", name, "ip", "addr", "add", "\(peerAddress)/30", "dev", peerInterface,
      ],
      ["ip", "netns", "exec", name, "ip", "link", "set", peerInterface, "up"],
      ["ip", "netns", "exec", name, "ip", "link", "set", "lo", "up"],
    ]
    for step in steps {
      guard (try? FaultSupport.tool(step))?.status == 0 else {
        remove()
        return nil
      }
    }
  }

  deinit { remove() }

  /// Removes a link (and its namespace) that a killed earlier run left holding `address`: its
  /// route would take this run's packets to a namespace where nothing listens.
  private static func removeStaleLink(holding address: String) {
    guard
      let listing = try? FaultSupport.tool([
        "ip", "-o", "-4", "addr", "show", "to", address + "/32",
      ]),
      let interface = listing.stdout.split(separator: " ").dropFirst().first
    else { return }
    let name = interface.split(separator: "@").first.map(String.init) ?? String(interface)
    _ = try? FaultSupport.tool(["ip", "link", "del", name])
    if name.hasPrefix("vif") {
      _ = try? FaultSupport.tool(["ip", "netns", "del", "ingest-fault-" + name.dropFirst(3)])
    }
  }

  /// Takes the link down or up.
  func setLink(up: Bool) throws {
    let result = try FaultSupport.tool(["ip", "link", "set", hostInterface, up ? "up" : "down"])
    guard result.status == 0 else { throw FaultError.failed("ip link set: \(result.stderr)") }
  }

  /// Shapes what leaves the root namespace towards the peer with a token bucket.
  func throttle(rate: String) throws {
    let result = try FaultSupport.tool([
      "tc", "qdisc", "add", "dev", hostInterface, "root", "tbf", "rate", rate, "burst", "16kbit",
      "latency", "400ms",
    ])
    guard result.status == 0 else { throw FaultError.failed("tc: \(result.stderr)") }
  }

  func remove() {
    guard !removed else { return }
    removed = true
    _ = try? FaultSupport.tool(["ip", "link", "del", hostInterface])
    _ = try? FaultSupport.tool(["ip", "netns", "del", name])
  }
}
