#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// How every executable of the package runs a command: `--help`, `--version`, a usage error
/// (exit 2) with a hint, any other error (exit 1), and a failed write to standard output turning
/// success into exit 1.
package enum CommandMain {
  /// Runs `command` with `argv` (the words after the command's name) and exits.
  /// - Parameter program: how the command is invoked, for messages (`ingest replay`).
  package static func run(_ command: any Command.Type, _ argv: [String], program: String)
    -> Never
  {
    if argv.contains("--help") || argv.contains("-h") {
      Console.out(command.help.hasSuffix("\n") ? command.help : command.help + "\n")
      exit(0)
    }
    if argv == ["--version"] {
      Console.out(Version.line(program) + "\n")
      exit(0)
    }
    do {
      var status = try command.run(argv)
      if let failure = Console.standardOutputFailure {
        Console.error("\(program): cannot write standard output: \(failure)")
        if status == 0 { status = 1 }
      }
      exit(status)
    } catch let error as UsageError {
      Console.error("\(program): \(error)\nRun '\(program) --help' for usage.")
      exit(2)
    } catch {
      Console.error("\(program): \(error)")
      exit(1)
    }
  }
}
