/// An output link's latest round trip and send buffer, as the progress line shows them (SRT:
/// libsrt's smoothed RTT and `msSndBuf`).
public struct LinkReading: Sendable, Equatable {
  /// Smoothed round-trip time, in milliseconds.
  public var roundTripMilliseconds: Double
  /// Time span of unacknowledged data in the send buffer, in milliseconds.
  public var sendBufferMilliseconds: Int

  public init(roundTripMilliseconds: Double, sendBufferMilliseconds: Int) {
    self.roundTripMilliseconds = roundTripMilliseconds
    self.sendBufferMilliseconds = sendBufferMilliseconds
  }
}
