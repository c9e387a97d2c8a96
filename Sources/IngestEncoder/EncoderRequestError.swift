/// Why a control line was not applied; reported on standard error, never fatal.
public struct EncoderRequestError: Error, Equatable, CustomStringConvertible {
  /// What is wrong with the line.
  public var reason: String

  public init(_ reason: String) { self.reason = reason }

  public var description: String { reason }
}
