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
  /// The dump holds no sample (only its header, or only format records): a valid, empty input.
  /// Nothing is opened or written; the run succeeds.
  case empty(path: String)
  /// A stop signal came while the run waited for its input's first records (a FIFO without a
  /// writer, a producer that never started): nothing was opened or written; the stop succeeds.
  case stoppedBeforeInput(path: String, signal: String)
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
    case .empty(let path): "\(path) holds no samples: nothing to replay, no output written"
    case .stoppedBeforeInput(let path, let signal):
      "stopped by \(signal) while waiting for \(path): nothing to replay, no output written"
    case .budget(let error): "memory budget: \(error)"
    case .output(let message), .usage(let message): message
    case .encoder(let message): "encoder: \(message)"
    }
  }
}
