import IngestBench
import IngestCore
import Synchronization

/// The output link's latest round trip and send buffer, for the progress line.
///
/// An SRT output reports them in the `stats` of the `sink` status event once a second
/// (`rtt_ms`, `send_buffer_ms`, see docs/status-events.md); the run hands each event line to
/// `observe` on the sender thread, and the progress line reads `latest` on the replay loop.
final class LinkFigures: Sendable {
  /// One reading of the link.
  struct Reading: Equatable {
    /// Smoothed round-trip time, in milliseconds.
    var roundTripMilliseconds: Double
    /// Time span of unacknowledged data in the send buffer, in milliseconds.
    var sendBufferMilliseconds: Int
  }

  /// Another output's tier and drops, from its `stats` event.
  struct OutputReading: Equatable {
    var output: Int
    var tier: Int
    var dropped: Int
  }

  private let reading = Mutex<Reading?>(nil)
  private let others = Mutex<[OutputReading]>([])

  /// The newest reading, nil until the output reported one.
  var latest: Reading? { reading.withLock { $0 } }

  /// The outputs after the first, by number, once each reported a `stats` event: the progress
  /// line shows the first output's counters, and only these for the others.
  var otherOutputs: [OutputReading] { others.withLock { $0 } }

  /// Takes the figures of a `sink` status event line (and of a `stats` line of an output
  /// after the first); ignores every other line.
  func observe(_ line: String) {
    if line.hasPrefix(#"{"event":"stats""#) && !line.contains(#""output":1,"#) {
      observeOtherOutput(line)
      return
    }
    // The round trip shown is the first output's.
    guard line.hasPrefix(#"{"event":"sink""#),
      !line.contains(#""output":"#) || line.contains(#""output":1,"#),
      let stats = (try? JSONValue(parsing: line))?["stats"],
      let roundTrip = stats["rtt_ms"]?.double, let buffer = stats["send_buffer_ms"]?.int
    else { return }
    reading.withLock {
      $0 = Reading(roundTripMilliseconds: roundTrip, sendBufferMilliseconds: buffer)
    }
  }

  private func observeOtherOutput(_ line: String) {
    guard let event = try? JSONValue(parsing: line), let output = event["output"]?.int,
      let tier = event["tier"]?.int, let dropped = event["dropped"]?.int
    else { return }
    let reading = OutputReading(output: output, tier: tier, dropped: dropped)
    others.withLock { list in
      if let index = list.firstIndex(where: { $0.output == output }) {
        list[index] = reading
      } else {
        list.append(reading)
        list.sort { $0.output < $1.output }
      }
    }
  }
}
