import Foundation
import IngestCore
import IngestPOSIX
import Synchronization

/// Reads JSON-line requests from a file descriptor (standard input) on its own thread and queues
/// them for the encoding loop, which takes them before each video frame.
///
/// Lines are read with IngestCore's `EncoderRequestDecoder`, the type the pipeline writes them
/// with. Malformed lines are reported through `log` and skipped. End of input ends only the reading:
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

  /// A request and when it arrived (on `SystemClock`, the dump's clock).
  struct ReceivedRequest: Sendable {
    var request: EncoderRequest
    var received: MonotonicInstant
  }

  /// The requests that arrived since the last call, oldest first.
  func take() -> [ReceivedRequest] {
    pending.withLock { queue in
      defer { queue.removeAll(keepingCapacity: true) }
      return queue
    }
  }

  private func read(_ input: FileDescriptor) {
    var decoder = EncoderRequestDecoder()
    let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
    defer { chunk.deallocate() }
    while let count = try? input.read(into: chunk), count > 0 {
      decoder.append(chunk[..<count])
      take(&decoder)
    }
    // A last line without its newline is a request all the same.
    decoder.finish()
    take(&decoder)
  }

  /// Queues every request the decoder holds and reports the lines that are none.
  private func take(_ decoder: inout EncoderRequestDecoder) {
    while true {
      do {
        guard let request = try decoder.next() else { return }
        let received = ReceivedRequest(request: request, received: SystemClock().now())
        pending.withLock { $0.append(received) }
      } catch {
        log.emit("rejected") {
          $0.add("line", decoder.lastRejectedLine)
          $0.add("reason", error.description)
        }
      }
    }
  }
}
