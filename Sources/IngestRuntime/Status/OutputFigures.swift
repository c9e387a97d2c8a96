import IngestCore

/// One output's figures of the second, handed as values to whoever shows them while the run
/// goes on (the terminal's progress line): the same figures as its `stats` and `sink` status
/// events, without writing and parsing JSON inside one process.
public struct OutputFigures: Sendable, Equatable {
  /// The output's number in the run, from 1.
  public var output: Int
  /// The degradation tier (`Tier.rawValue`).
  public var tier: Int
  /// Samples dropped so far, every reason together.
  public var dropped: Int
  /// The link's round trip and send buffer, when the output reads them (SRT).
  public var link: LinkReading?

  public init(output: Int, tier: Int, dropped: Int, link: LinkReading? = nil) {
    self.output = output
    self.tier = tier
    self.dropped = dropped
    self.link = link
  }
}
