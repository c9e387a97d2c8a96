import IngestPOSIX

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A small command-line parser: flags with values, boolean switches and positionals.
///
/// Swift packages from outside the toolchain are not available, so the CLI parses by hand.
package struct Arguments {
  package private(set) var positionals: [String] = []
  private var options: [String: String] = [:]
  /// Every value of each valued option, in order (an option may be given more than once).
  private var allValues: [String: [String]] = [:]
  private var switches: Set<String> = []

  /// Parses `argv` (without the program and subcommand names).
  /// - Parameters:
  ///   - valued: option names that take a value (`--to X` or `--to=X`).
  ///   - flags: option names that take no value.
  package init(_ argv: [String], valued: Set<String>, flags: Set<String>) throws(UsageError) {
    var index = 0
    while index < argv.count {
      let arg = argv[index]
      index += 1
      if arg == "--" {
        positionals.append(contentsOf: argv[index...])
        break
      }
      guard arg.hasPrefix("-"), arg.count > 1 else {
        positionals.append(arg)
        continue
      }
      var name = arg
      var inlineValue: String?
      if let eq = arg.firstIndex(of: "=") {
        name = String(arg[..<eq])
        inlineValue = String(arg[arg.index(after: eq)...])
      }
      if flags.contains(name) {
        guard inlineValue == nil else { throw UsageError("\(name) takes no value") }
        switches.insert(name)
      } else if valued.contains(name) {
        let value: String
        if let inlineValue {
          value = inlineValue
        } else {
          guard index < argv.count else { throw UsageError("\(name) needs a value") }
          value = argv[index]
          index += 1
        }
        options[name] = value
        allValues[name, default: []].append(value)
      } else {
        throw UsageError("unknown option \(name)")
      }
    }
  }

  /// The process's arguments after the program's name, read from the bytes the kernel passed
  /// (`CommandLine.arguments` would have replaced those that are not UTF-8), so that a file name
  /// reaches `open` exactly as given; see `SystemPath`.
  package static var commandLine: [String] {
    (1..<Int(CommandLine.argc)).map { index in
      guard let word = CommandLine.unsafeArgv[index] else { return "" }
      return SystemPath.string(decoding: UnsafeRawBufferPointer(start: word, count: strlen(word)))
    }
  }

  /// The value of a valued option, if given (the last one, when given more than once).
  package subscript(_ name: String) -> String? { options[name] }

  /// Every value given for a valued option, in order.
  package func values(_ name: String) -> [String] { allValues[name] ?? [] }

  /// Whether a switch was given.
  package func has(_ name: String) -> Bool { switches.contains(name) }

  /// Parses an integer option within a range.
  package func int(_ name: String, in range: ClosedRange<Int>) throws(UsageError) -> Int? {
    guard let text = options[name] else { return nil }
    guard let value = Int(text), range.contains(value) else {
      throw UsageError(
        "\(name) must be an integer in \(range.lowerBound)...\(range.upperBound), got '\(text)'")
    }
    return value
  }
}

/// A mistake in how the command was invoked: printed with a hint and exit status 2.
package struct UsageError: Error, CustomStringConvertible {
  package let description: String
  package init(_ message: String) { description = message }
}
