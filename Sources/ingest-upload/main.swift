import IngestCLI

// `ingest upload` replaces itself with this program (see UploadLauncher in the ingest target).
CommandMain.run(
  UploadCommand.self, Array(CommandLine.arguments.dropFirst()), program: "ingest upload")
