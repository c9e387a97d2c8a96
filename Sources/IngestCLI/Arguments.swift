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
  /// Options of earlier releases and what took their place, so that a script written for one
  /// is told what to write now rather than that the option is unknown.
  static let replaced = ["--rtmp-audio": "--audio app|mic|mix|both (mix is RTMP's default)"]
  private var options: [String: String] = [:]
  /// Every value of each valued option, in order (an option may be given more than once).
  private var allValues: [String: [String]] = [:]
  private var switches: Set<String> = []

  /// Parses `argv` (without the program and subcommand names).
  /// - Parameters:
  ///   - valued: option names that take a value (`--to X` or `--to=X`).
  ///   - flags: option names that take no value.
  ///   - expecting: what the value of an option may be (`"--audio": "mix, app, mic or both"`),
  ///     said when the value is missing.
  package init(
    _ argv: [String], valued: Set<String>, flags: Set<String>, expecting: [String: String] = [:]
  ) throws(UsageError) {
    func missingValue(_ name: String) -> UsageError {
      UsageError("\(name) needs a value" + (expecting[name].map { ": " + $0 } ?? ""))
    }
    /// Whether `word` is one of the options: then it is not the value of the one before it
    /// (`--audio --to out.ts` forgot the value; taking `--to` for it would make `out.ts` a
    /// positional and the message about the wrong thing).
    func isOption(_ word: String) -> Bool {
      let name = word.firstIndex(of: "=").map { String(word[..<$0]) } ?? word
      return valued.contains(name) || flags.contains(name)
    }
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
          guard index < argv.count, !isOption(argv[index]) else { throw missingValue(name) }
          value = argv[index]
          index += 1
        }
        options[name] = value
        allValues[name, default: []].append(value)
      } else if let replacement = Self.replaced[name] {
        throw UsageError("\(name) was replaced: use \(replacement)")
      } else {
        let hint = Suggestion.closest(to: name, among: valued.union(flags))
        throw UsageError("unknown option \(name)" + (hint.map { "; did you mean \($0)?" } ?? ""))
      }
    }
  }

  /// The process's arguments after the program's name, read from the bytes the kernel passed
  /// (`CommandLine.arguments` would have replaced those that are not UTF-8), so that a file name
  /// reaches `open` exactly as given; see `SystemPath`.
  ///
  /// A preloaded library such as libfaketime can leave the runtime with an argc of 0 (it reads
  /// them in an ELF initializer that then gets none): the words are then read from
  /// `/proc/self/cmdline`, the kernel's copy of the same bytes, so the command still runs.
  package static var commandLine: [String] {
    if CommandLine.argc > 0 {
      return afterProgramName(argc: CommandLine.argc, argv: CommandLine.unsafeArgv)
    }
    return afterProgramName(nulSeparated: processCommandLineBytes())
  }

  /// The words of `argv` after the program's name; none for an `argc` of 0 or 1.
  package static func afterProgramName(
    argc: Int32, argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
  ) -> [String] {
    guard argc > 1 else { return [] }
    return (1..<Int(argc)).map { index in
      guard let word = argv[index] else { return "" }
      return SystemPath.string(decoding: UnsafeRawBufferPointer(start: word, count: strlen(word)))
    }
  }

  /// The words after the program's name in `bytes`, the NUL-terminated words of
  /// `/proc/self/cmdline`; none when it is empty or holds the name alone.
  package static func afterProgramName(nulSeparated bytes: [UInt8]) -> [String] {
    var words = bytes.split(separator: 0, omittingEmptySubsequences: false)
    // Every word ends with a NUL, so the split leaves an empty piece after the last one.
    if words.last?.isEmpty == true { words.removeLast() }
    return words.dropFirst().map { SystemPath.string(decoding: $0) }
  }

  /// The bytes of `/proc/self/cmdline`, or none where there is no such file (not Linux).
  private static func processCommandLineBytes() -> [UInt8] {
    guard let file = try? FileDescriptor.open("/proc/self/cmdline", O_RDONLY) else { return [] }
    defer { file.close() }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = chunk.withUnsafeMutableBytes { (try? file.read(into: $0)) ?? 0 }
      guard count > 0 else { break }
      bytes += chunk[..<count]
    }
    return bytes
  }

  /// The value of a valued option, if given (the last one, when given more than once).
  package subscript(_ name: String) -> String? { options[name] }

  /// Every value given for a valued option, in order.
  package func values(_ name: String) -> [String] { allValues[name] ?? [] }

  /// The value of an option that may be given once: a second one is refused rather than
  /// silently taking the place of the first.
  /// - Throws: `UsageError` naming the option and both values.
  package func single(_ name: String) throws(UsageError) -> String? {
    let given = values(name)
    guard given.count <= 1 else {
      throw UsageError(
        "\(name) is given more than once ('\(given[0])', then '\(given[1])'); give it once")
    }
    return given.first
  }

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
