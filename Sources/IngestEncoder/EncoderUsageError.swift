/// A command line the encoder cannot run: exit status 2, with the usage hint.
public struct EncoderUsageError: Error, Equatable, CustomStringConvertible {
  /// What is wrong, naming the argument.
  public var message: String

  public init(_ message: String) { self.message = message }

  public var description: String { message }
}
