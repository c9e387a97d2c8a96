import IngestCore
import IngestPOSIX

/// Writes the encoder's JSON lines to standard error: what was applied and when, figures once a
/// second, and errors. Each line is one `write`, so lines from two threads never interleave.
struct EncoderLog: Sendable {
  private let output: FileDescriptor

  init(output: FileDescriptor = .standardError) { self.output = output }

  /// Writes `{"event":NAME, …}`; `fill` adds the members.
  func emit(_ name: String, _ fill: (inout JSONObject) -> Void) {
    var object = JSONObject()
    object.add("event", name)
    fill(&object)
    // stderr going away must not stop the encoder: its stdout is what matters.
    try? output.writeAll(object.rendered + "\n")
  }
}
