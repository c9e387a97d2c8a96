import IngestCore
import IngestPOSIX

#if canImport(Glibc)
  import Glibc
#endif

// `ingest-whip`: the WebRTC side of a WHIP output, in a process of its own so that GLib,
// GStreamer, libnice and their threads never sit in the pipeline's process (docs/architecture.md).

let events = EventWriter()

/// Ends the program with `error`: one line on standard error, an `error` event, and its status.
func fail(_ error: WHIPClientError) -> Never {
  var fields = JSONObject()
  fields.add("name", error.name)
  fields.add("message", error.description)
  fields.add("retryable", error.isRetryable)
  if case .usage = error {} else { events.emit("error", fields) }
  _ = try? FileDescriptor.standardError.writeAll("ingest-whip: \(error)\n")
  exit(error.exitStatus)
}

do throws(WHIPClientError) {
  let options = try WHIPClientOptions(Array(CommandLine.arguments.dropFirst()))
  WHIPStop.install()
  // A closed stdout (the pipeline process gone) must not kill us before the DELETE.
  signal(SIGPIPE, SIG_IGN)
  let token = SecretSource.environment(WHIPClientOptions.tokenVariable, in: nil).map {
    String(decoding: $0, as: UTF8.self)
  }
  if let token, token.isEmpty || token.contains(where: { $0.isNewline }) {
    throw .usage("environment variable \(WHIPClientOptions.tokenVariable) is empty or not one line")
  }
  let publisher = WHIPPublisher(options: options, token: token, events: events)
  try publisher.run()
  exit(0)
} catch {
  fail(error)
}
