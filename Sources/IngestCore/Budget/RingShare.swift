import Synchronization

/// One output's part of a memory budget that several outputs share.
///
/// A run with several outputs has one ring per output (each output drops for itself), but one
/// budget: the run reserves every output's fixed buffers in a single `MemoryBudget` and splits
/// what is left between the rings. Each pipeline adds its ring's live bytes to the shared
/// `RingLedger`, so the ledger it reports, and the pressure it steers by, are the whole run's.
public struct RingShare: Sendable {
  /// The live bytes of every ring of the run.
  public let ledger: RingLedger
  /// This output's ring arena: its share of what the budget leaves for rings.
  public let arenaBytes: Int

  public init(ledger: RingLedger, arenaBytes: Int) {
    self.ledger = ledger
    self.arenaBytes = arenaBytes
  }
}

/// The live ring bytes of all the outputs of a run, updated by each output's pipeline under its
/// own lock (an atomic, so outputs never wait for each other).
public final class RingLedger: Sendable {
  private let bytes = Atomic<Int>(0)

  public init() {}

  /// The live bytes of every ring.
  public var liveBytes: Int { bytes.load(ordering: .relaxed) }

  /// Adds a ring's change in live bytes; returns the new total.
  func add(_ delta: Int) -> Int {
    bytes.wrappingAdd(delta, ordering: .relaxed).newValue
  }
}
