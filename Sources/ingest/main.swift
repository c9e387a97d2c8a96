import IngestCLI

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

let commands: [any Command.Type] = [
  ReplayCommand.self, LiveCommand.self, InspectCommand.self, CaptureCommand.self,
  RecoverCommand.self,
  BenchCommand.self, UploadLauncher.self,
]

func topLevelHelp(_ commands: [any Command.Type]) -> String {
  var text = """
    ingest: a memory-bounded live ingest pipeline (dump -> MPEG-TS -> file, SRT, RTMP, HLS)

    usage: ingest <command> [options]

    commands:

    """
  for command in commands {
    text += "  " + command.name.padding(to: 10) + command.summary + "\n"
  }
  text += "\nRun 'ingest <command> --help' for the options of a command,"
  text += " 'ingest --version' for the version.\n"
  return text
}

extension String {
  func padding(to width: Int) -> String {
    count >= width ? self + " " : self + String(repeating: " ", count: width - count)
  }
}

// A closed pipe is an error of the write (EPIPE, handled where it happens), not a reason to die:
// `ingest replay --status - | head` ends the status output, not the recording.
signal(SIGPIPE, SIG_IGN)

var argv = ArraySlice(Arguments.commandLine)
guard let word = argv.first else {
  Console.error("ingest: missing command\n\n" + topLevelHelp(commands))
  exit(2)
}
argv = argv.dropFirst()
if word == "--help" || word == "-h" || word == "help" {
  Console.out(topLevelHelp(commands))
  exit(0)
}
if word == "--version" {
  Console.out(Version.line("ingest") + "\n")
  exit(0)
}
guard let command = commands.first(where: { $0.name == word }) else {
  let hint = Suggestion.closest(to: word, among: commands.map { $0.name })
  Console.error(
    "ingest: unknown command '\(word)'" + (hint.map { "; did you mean '\($0)'?" } ?? "")
      + "\n\n" + topLevelHelp(commands))
  exit(2)
}
if command == UploadLauncher.self { UploadLauncher.exec(Array(argv)) }
CommandMain.run(command, Array(argv), program: "ingest \(command.name)")
