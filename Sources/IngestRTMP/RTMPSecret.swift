import IngestPOSIX

/// A stream key taken from a file (`key_file=`) or an environment variable, so that it never has
/// to be on the command line, where `ps` and `/proc/PID/cmdline` show it to every user of the
/// machine.
///
/// Errors name the option or variable and the file, never the content.
enum RTMPSecret {
  /// A key checked against the rules of a key in the URL: not empty, at most `maximumBytes`,
  /// no space or control character (which also keeps it to one line), UTF-8.
  /// - Parameters:
  ///   - option: the URL option (`key_file`) or the environment variable it came from.
  ///   - path: the file it was read from; `nil` for an environment variable.
  static func checked(_ bytes: [UInt8], option: String, path: String?, maximumBytes: Int)
    throws(RTMPTargetError) -> String
  {
    guard !bytes.isEmpty else { throw .emptySecret(option: option, path: path) }
    guard !bytes.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
      throw .invalidSecret(
        option: option, path: path, reason: "holds a space, a control character or a second line")
    }
    guard bytes.count <= maximumBytes else {
      throw .invalidSecret(
        option: option, path: path, reason: "must be at most \(maximumBytes) bytes long")
    }
    guard let text = String(validating: bytes, as: UTF8.self) else {
      throw .invalidSecret(option: option, path: path, reason: "is not valid UTF-8")
    }
    return text
  }

  /// The content of the file at `path`, without one trailing line end, checked as `checked`
  /// does (`SecretSource.file`).
  static func read(file path: String, option: String, maximumBytes: Int)
    throws(RTMPTargetError) -> String
  {
    let bytes: [UInt8]
    do { bytes = try SecretSource.file(path, maximumBytes: maximumBytes) } catch {
      throw .unreadableSecretFile(option: option, path: path, reason: error.description)
    }
    return try checked(bytes, option: option, path: path, maximumBytes: maximumBytes)
  }

  /// The value of environment variable `name` in `variables` when given, else in the process's
  /// environment, checked as `checked` does; `nil` when it is not set.
  static func environment(_ name: String, in variables: [String: String]?, maximumBytes: Int)
    throws(RTMPTargetError) -> String?
  {
    guard let bytes = SecretSource.environment(name, in: variables) else { return nil }
    return try checked(bytes, option: name, path: nil, maximumBytes: maximumBytes)
  }
}
