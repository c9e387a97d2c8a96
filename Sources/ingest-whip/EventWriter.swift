import IngestCore
import IngestPOSIX

/// The JSON lines `ingest-whip` writes on standard output for the pipeline process
/// (`WHIPEvent` in `IngestWHIP` reads them): state changes, statistics, keyframe requests.
/// Called from GStreamer's threads and the main one; the lock keeps each line whole.
final class EventWriter: Sendable {
  private let lock = ConditionLock()

  /// Writes `{"event":name, ...fields}` and a line end.
  func emit(_ name: String, _ fields: JSONObject = JSONObject()) {
    var object = JSONObject()
    object.add("event", name)
    object.merge(fields)
    let line = object.rendered + "\n"
    lock.withLock {
      // The reader gone (the pipeline process ended) is no reason to stop before our own stop.
      _ = try? FileDescriptor.standardOutput.writeAll(line)
    }
  }
}
