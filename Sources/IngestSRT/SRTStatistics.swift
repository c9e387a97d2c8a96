/// A snapshot of an SRT connection, read by the sender about once a second for status events.
public struct SRTStatistics: Sendable, Equatable {
  /// Time span of unacknowledged data in the send buffer, in milliseconds.
  public var sendBufferMilliseconds: Int
  /// Unacknowledged bytes in the send buffer.
  public var sendBufferBytes: Int
  /// Smoothed round-trip time, in milliseconds.
  public var roundTripMilliseconds: Double
  /// Link bandwidth estimated by libsrt, in megabits per second.
  public var estimatedBandwidthMbps: Double
  /// Packets the sender dropped because they were too late to be useful (since connect).
  public var tooLateDroppedPackets: Int
  /// Payload bytes sent, retransmissions included (since connect).
  public var bytesSent: UInt64
  /// Packets retransmitted (since connect).
  public var retransmittedPackets: Int

  public init(
    sendBufferMilliseconds: Int, sendBufferBytes: Int, roundTripMilliseconds: Double,
    estimatedBandwidthMbps: Double, tooLateDroppedPackets: Int, bytesSent: UInt64,
    retransmittedPackets: Int
  ) {
    self.sendBufferMilliseconds = sendBufferMilliseconds
    self.sendBufferBytes = sendBufferBytes
    self.roundTripMilliseconds = roundTripMilliseconds
    self.estimatedBandwidthMbps = estimatedBandwidthMbps
    self.tooLateDroppedPackets = tooLateDroppedPackets
    self.bytesSent = bytesSent
    self.retransmittedPackets = retransmittedPackets
  }
}
