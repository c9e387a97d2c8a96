import IngestCore
import IngestRuntime
import Synchronization

/// The output link's latest round trip and send buffer, and the other outputs' tiers and
/// drops, for the progress line.
///
/// Each output's `StatusReporter` hands its `OutputFigures` to `observe` once a second on the
/// output's sender thread (`ReplayOptions.outputFigures`); the progress line reads `latest` and
/// `otherOutputs` on the replay loop.
final class LinkFigures: Sendable {
  /// Another output's tier and drops.
  struct OutputReading: Equatable {
    var output: Int
    var tier: Int
    var dropped: Int
  }

  private let reading = Mutex<LinkReading?>(nil)
  private let others = Mutex<[OutputReading]>([])

  /// The first output's newest link reading, nil until it reported one (SRT).
  var latest: LinkReading? { reading.withLock { $0 } }

  /// The outputs after the first, by number, once each reported: the progress line shows the
  /// first output's counters, and only these for the others.
  var otherOutputs: [OutputReading] { others.withLock { $0 } }

  /// Takes one output's figures of the second.
  func observe(_ figures: OutputFigures) {
    guard figures.output != 1 else {
      // The round trip shown is the first output's.
      if let link = figures.link { reading.withLock { $0 = link } }
      return
    }
    let other = OutputReading(output: figures.output, tier: figures.tier, dropped: figures.dropped)
    others.withLock { list in
      if let index = list.firstIndex(where: { $0.output == other.output }) {
        list[index] = other
      } else {
        list.append(other)
        list.sort { $0.output < $1.output }
      }
    }
  }
}
