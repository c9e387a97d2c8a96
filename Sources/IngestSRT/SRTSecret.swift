import IngestPOSIX

/// A passphrase or stream id taken from a file (`passphrase_file=`, `streamid_file=`) or an
/// environment variable, so that it never has to be on the command line, where `ps` and
/// `/proc/PID/cmdline` show it to every user of the machine.
///
/// Errors name the option or variable and the file, never the content.
enum SRTSecret {
  /// A secret checked against `allowed` (its length in bytes) and the rules every secret
  /// shares: not empty, UTF-8, one line.
  /// - Parameters:
  ///   - option: the URL option (`passphrase_file`) or the environment variable it came from.
  ///   - path: the file it was read from; `nil` for an environment variable.
  static func checked(
    _ bytes: [UInt8], option: String, path: String?, allowed: ClosedRange<Int>
  ) throws(SRTOptionsError) -> String {
    guard !bytes.isEmpty else { throw .emptySecret(option: option, path: path) }
    // A second line is almost always a mistake (two secrets in one file, an editor's header);
    // sent as is it would only show up as a refused handshake.
    guard !bytes.contains(where: { $0 == 0x0A || $0 == 0x0D }) else {
      throw .invalidSecret(option: option, path: path, reason: "holds more than one line")
    }
    // A NUL or another control character: libsrt would stop at a NUL and use a shorter
    // passphrase than the one written.
    guard !bytes.contains(where: SRTOptions.isControl) else {
      throw .invalidSecret(option: option, path: path, reason: "holds a control character")
    }
    guard allowed.contains(bytes.count) else {
      throw .invalidSecret(
        option: option, path: path,
        reason: "must be \(allowed.lowerBound) to \(allowed.upperBound) bytes long")
    }
    guard let text = String(validating: bytes, as: UTF8.self) else {
      throw .invalidSecret(option: option, path: path, reason: "is not valid UTF-8")
    }
    return text
  }

  /// The content of the file at `path`, without one trailing line end, checked as `checked`
  /// does (`SecretSource.file`).
  static func read(file path: String, option: String, allowed: ClosedRange<Int>)
    throws(SRTOptionsError) -> String
  {
    let bytes: [UInt8]
    do { bytes = try SecretSource.file(path, maximumBytes: allowed.upperBound) } catch {
      throw .unreadableSecretFile(option: option, path: path, reason: error.description)
    }
    return try checked(bytes, option: option, path: path, allowed: allowed)
  }

  /// The value of environment variable `name` in `variables` when given, else in the process's
  /// environment, checked as `checked` does; `nil` when it is not set.
  static func environment(
    _ name: String, in variables: [String: String]?, allowed: ClosedRange<Int>
  )
    throws(SRTOptionsError) -> String?
  {
    guard let bytes = SecretSource.environment(name, in: variables) else { return nil }
    return try checked(bytes, option: name, path: nil, allowed: allowed)
  }
}
