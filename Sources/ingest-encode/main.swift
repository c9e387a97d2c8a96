import IngestEncoder
import IngestPOSIX

#if canImport(Glibc)
  import Glibc
#endif

// The encoder process of `ingest live`: a separate executable because it links libav* directly,
// and its memory must stay out of the pipeline process, whose resident size the budget governs.
let arguments = Array(CommandLine.arguments.dropFirst())
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
