import IngestCore

extension VirtualClock: PacingClock {
  /// Sleeping on a virtual clock is jumping to the deadline.
  public func sleep(until deadline: MonotonicInstant) { advance(to: deadline) }

  /// Virtual time moves only when told to.
  public var passesInRealTime: Bool { false }
}
