import IngestCore
import IngestPOSIX

/// Why a replay could not start or had to stop.
public enum ReplayError: Error, Sendable, CustomStringConvertible {
  /// The dump could not be opened.
  case open(FileError)
  /// The dump could not be read before the first sample.
  case dump(path: String, DumpError)
  /// The dump announces no track near its start.
  case noTracks(path: String)
  /// The buffers of this configuration do not fit in the memory budget.
  case budget(BudgetError)
  /// The output cannot be used with these tracks or this build.
  case output(String)
  /// The output was named wrongly (exit status 2).
  case usage(String)
  /// The live encoder could not be started.
  case encoder(String)

  public var description: String {
    switch self {
    case .open(let error): error.description
    case .dump(let path, let error): "\(path): \(error)"
    case .noTracks(let path): "\(path): no format record near the start: nothing to replay"
    case .budget(let error): "memory budget: \(error)"
    case .output(let message), .usage(let message): message
    case .encoder(let message): "encoder: \(message)"
    }
  }
}
