/// The memory ledger: every buffer the pipeline holds, plus a modelled extension overhead.
///
/// ```
/// budget (default 50 MB)
/// ├─ overhead      what the OS and frameworks take in a real extension (default 20 MB)
/// ├─ fixed buffers reserved at start: reader, ring records, sink buffers
/// └─ ring          the live bytes of the send ring; its limit is whatever is left
/// ```
/// Fixed buffers are reserved once; a reservation that would cross the budget fails, so a
/// configuration that cannot fit is refused before the run starts. The ring's byte limit is the
/// remainder, so the ledger can never exceed the budget.
public struct MemoryBudget: Sendable {
  /// One reserved buffer.
  public struct Entry: Sendable, Equatable {
    public var name: String
    public var bytes: Int
  }

  /// The ceiling, in bytes.
  public let budget: Int
  /// The modelled overhead, in bytes.
  public let overhead: Int
  /// Reserved fixed buffers, in the order reserved.
  public private(set) var entries: [Entry] = []

  /// - Throws: `BudgetError.overheadExceedsBudget` when nothing would be left for buffers.
  public init(budget: Int, overhead: Int) throws(BudgetError) {
    guard budget > 0, overhead >= 0, overhead < budget else {
      throw .overheadExceedsBudget(budget: budget, overhead: overhead)
    }
    self.budget = budget
    self.overhead = overhead
  }

  /// Sum of the fixed buffers.
  public var fixedBytes: Int { entries.reduce(0) { $0 + $1.bytes } }

  /// What is left for the ring.
  public var available: Int { budget - overhead - fixedBytes }

  /// Enters a fixed buffer in the ledger.
  /// - Throws: `BudgetError.exceeded` naming the buffer when it does not fit.
  public mutating func reserve(_ name: String, bytes: Int) throws(BudgetError) {
    guard bytes >= 0, bytes <= available else {
      throw .exceeded(name: name, bytes: bytes, available: available)
    }
    entries.append(Entry(name: name, bytes: bytes))
  }

  /// The ledger total for a given number of live ring bytes.
  @inlinable public func ledger(ringBytes: Int) -> Int { overhead + fixedBytes + ringBytes }
}

/// Why a memory budget could not be set up.
public enum BudgetError: Error, Equatable, Sendable, CustomStringConvertible {
  case overheadExceedsBudget(budget: Int, overhead: Int)
  case exceeded(name: String, bytes: Int, available: Int)
  /// What is left for one sample after every output's buffers is below
  /// `SampleSizeLimit.minimumUseful`; `budgetNeeded` (bytes) is the budget at which it is not.
  case tooLittleForASample(outputs: Int, sampleBytes: Int, budgetNeeded: Int?)

  public var description: String {
    switch self {
    case .overheadExceedsBudget(let budget, let overhead):
      "overhead of \(overhead) bytes leaves nothing of the \(budget)-byte budget"
    case .exceeded(let name, let bytes, let available):
      "\(name) needs \(bytes) bytes but only \(available) are left in the memory budget"
    case .tooLittleForASample(let outputs, let sampleBytes, let budgetNeeded):
      "\(outputs) output(s) leave room for samples of only \(sampleBytes) bytes (a run needs "
        + "\(SampleSizeLimit.minimumUseful)); "
        + (budgetNeeded.map {
          "--budget \(($0 + 999_999) / 1_000_000) or more holds them, or use fewer outputs"
        }
          ?? "use fewer outputs")
    }
  }
}
