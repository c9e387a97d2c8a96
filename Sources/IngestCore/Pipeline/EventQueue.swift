/// A fixed-capacity FIFO of pipeline events: the capture thread never allocates to report.
/// When full, the oldest event is overwritten and counted as lost.
struct EventQueue {
  private var slots: [PipelineEvent?]
  private var head = 0
  private var count = 0
  private(set) var lost = 0

  init(capacity: Int) {
    slots = [PipelineEvent?](repeating: nil, count: capacity)
  }

  mutating func push(_ event: PipelineEvent) {
    if count == slots.count {
      head = (head + 1) % slots.count
      count -= 1
      lost += 1
    }
    slots[(head + count) % slots.count] = event
    count += 1
  }

  mutating func pop() -> PipelineEvent? {
    guard count > 0 else { return nil }
    let event = slots[head]
    slots[head] = nil
    head = (head + 1) % slots.count
    count -= 1
    return event
  }
}
