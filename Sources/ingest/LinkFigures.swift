import IngestBench
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

  private let reading = Mutex<Reading?>(nil)

  /// The newest reading, nil until the output reported one.
  var latest: Reading? { reading.withLock { $0 } }

  /// Takes the figures of a `sink` status event line; ignores every other line.
  func observe(_ line: String) {
    guard line.hasPrefix(#"{"event":"sink""#),
      let stats = (try? JSONValue(parsing: line))?["stats"],
      let roundTrip = stats["rtt_ms"]?.double, let buffer = stats["send_buffer_ms"]?.int
    else { return }
    reading.withLock {
      $0 = Reading(roundTripMilliseconds: roundTrip, sendBufferMilliseconds: buffer)
    }
  }
}
