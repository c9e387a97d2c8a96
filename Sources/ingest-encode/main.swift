import IngestCLI
import IngestEncoder
import IngestPOSIX

#if canImport(Glibc)
  import Glibc
#endif

// The encoder process of `ingest live`: a separate executable because it links libav* directly,
// and its memory must stay out of the pipeline process, whose resident size the budget governs.
// Read from the raw argv as `ingest` reads its own (and from /proc/self/cmdline when a preloaded
// libfaketime leaves argc at 0), so `ingest live` under faketime passes its SOURCE through.
let arguments = Arguments.commandLine
if arguments == ["--version"] {
  try? FileDescriptor.standardOutput.writeAll(Version.line("ingest-encode") + "\n")
  exit(0)
}
let options: EncoderOptions
do {
  guard let parsed = try EncoderOptions.parse(arguments) else {
    try? FileDescriptor.standardOutput.writeAll(EncoderOptions.usage + "\n")
    exit(0)
  }
  options = parsed
} catch {
  try? FileDescriptor.standardError.writeAll(
    "ingest-encode: \(error)\nusage: ingest-encode SOURCE [options]; see --help\n")
  exit(2)
}

do {
  let encoder = try LiveEncoder(options: options)
  try encoder.run()
} catch {
  try? FileDescriptor.standardError.writeAll("ingest-encode: error: \(error)\n")
  exit(1)
}
