import Foundation
import IngestPOSIX
import Synchronization

/// Reads JSON-line requests from a file descriptor (standard input) on its own thread and queues
/// them for the encoding loop, which takes them before each video frame.
///
/// Malformed lines are reported through `log` and skipped. End of input ends only the reading:
/// the encoder goes on with the requests it has.
final class ControlChannel: Sendable {
  private let pending = Mutex<[ReceivedRequest]>([])
  private let log: EncoderLog

  /// Starts reading `input` at once.
  init(input: FileDescriptor, log: EncoderLog) {
    self.log = log
    let thread = Thread { [self] in self.read(input) }
    thread.name = "control"
    thread.start()
  }

  /// A request and when it arrived (CLOCK_MONOTONIC nanoseconds, the dump's clock).
  struct ReceivedRequest: Sendable {
    var request: EncoderRequest
    var receivedNanoseconds: Int64
  }

  /// The requests that arrived since the last call, oldest first.
  func take() -> [ReceivedRequest] {
    pending.withLock { queue in
      defer { queue.removeAll(keepingCapacity: true) }
      return queue
    }
  }

  private func read(_ input: FileDescriptor) {
    var line: [UInt8] = []
    let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
    defer { chunk.deallocate() }
    while let count = try? input.read(into: chunk), count > 0 {
      for byte in chunk[..<count] {
        guard byte == UInt8(ascii: "\n") else {
          // A line longer than any request is garbage; keep its head for the report only.
          if line.count < 4096 { line.append(byte) }
          continue
        }
        accept(String(decoding: line, as: UTF8.self))
        line.removeAll(keepingCapacity: true)
      }
    }
    if !line.isEmpty { accept(String(decoding: line, as: UTF8.self)) }
  }

  private func accept(_ text: String) {
    let line = text.trimmingCharacters(in: .whitespacesAndNewlines)
    guard !line.isEmpty else { return }
    do {
      let request = try EncoderRequest(line: line)
      let received = ReceivedRequest(request: request, receivedNanoseconds: SystemClock().now())
      pending.withLock { $0.append(received) }
    } catch {
      log.emit("rejected") {
        $0.add("line", String(line.prefix(200)))
        $0.add("reason", error.reason)
      }
    }
  }
}
