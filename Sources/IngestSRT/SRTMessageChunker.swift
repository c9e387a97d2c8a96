import IngestCore

/// Cuts the sink's TS byte stream into SRT live messages of exactly 7 × 188 = 1316 bytes, across
/// unit boundaries, and remembers how far a unit got when a send timed out.
///
/// ```
///   unit k-1 tail        unit k                                   unit k+1
///   ┌──────┐   ┌───────────────────────────────────────────┐
///   │carry │ + │ fill carry │ 1316 │ 1316 │ ... │ rest ──► carry (0...6 packets)
///   └──────┘   └───────────────────────────────────────────┘
///        sent as one message   sent straight from the unit's bytes
/// ```
///
/// A unit answered with `.blocked` is not finished: part of it may be on the wire already (or in the
/// carry). The caller must present the same unit again and the chunker resumes at the recorded
/// offset; presenting another unit instead would leave a torn PES at the receiver, so that is
/// reported as a retryable failure (the sender reconnects and restarts at a keyframe).
struct SRTMessageChunker: ~Copyable {
  /// Bytes in every message but possibly the last one of a run.
  static let messageSize = 7 * 188
  static let packetSize = 188

  /// How far `push` got.
  enum Progress: Equatable {
    /// The unit is sent or held in the carry.
    case complete
    /// A send timed out; present the same unit again.
    case blocked
  }

  private let carry: UnsafeMutableRawBufferPointer
  /// Bytes waiting in the carry, always a whole number of TS packets below `messageSize`, or
  /// exactly `messageSize` when a send of the full carry timed out.
  private(set) var carryCount = 0
  private var resume: (unit: OutgoingUnit, length: Int, offset: Int)?

  /// The connection's redacted endpoint, for errors.
  let endpoint: String

  init(endpoint: String) {
    self.endpoint = endpoint
    carry = .allocate(byteCount: Self.messageSize, alignment: 1)
  }

  deinit {
    carry.deallocate()
  }

  /// Whether a unit is half-way through: some of its bytes went out or into the carry.
  var hasPartialUnit: Bool { (resume?.offset ?? 0) > 0 }

  /// Feeds one unit's TS packets.
  /// - Parameter send: sends one message; returns `false` when it timed out with nothing sent.
  mutating func push(
    _ unit: OutgoingUnit, bytes: UnsafeRawBufferPointer,
    send: (UnsafeRawBufferPointer) throws(SinkError) -> Bool
  ) throws(SinkError) -> Progress {
    var offset = 0
    if let resume {
      if resume.unit == unit && resume.length == bytes.count {
        offset = resume.offset
      } else if resume.offset > 0 {
        throw .write(
          endpoint: endpoint,
          reason: "a different unit arrived while the previous one was partly sent; reconnecting",
          retryable: true)
      }
      self.resume = nil
    }
    guard bytes.count % Self.packetSize == 0 else {
      throw .unsupported(
        endpoint: endpoint,
        reason: "a unit of \(bytes.count) bytes is not a whole number of 188-byte TS packets")
    }
    while true {
      if carryCount == Self.messageSize {
        guard try send(UnsafeRawBufferPointer(carry)) else {
          resume = (unit, bytes.count, offset)
          return .blocked
        }
        carryCount = 0
      }
      let remaining = bytes.count - offset
      if remaining == 0 { break }
      if carryCount == 0 && remaining >= Self.messageSize {
        let message = UnsafeRawBufferPointer(
          rebasing: bytes[offset..<(offset + Self.messageSize)])
        guard try send(message) else {
          resume = (unit, bytes.count, offset)
          return .blocked
        }
        offset += Self.messageSize
        continue
      }
      let take = min(Self.messageSize - carryCount, remaining)
      UnsafeMutableRawBufferPointer(rebasing: carry[carryCount..<(carryCount + take)])
        .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + take)]))
      carryCount += take
      offset += take
    }
    return .complete
  }

  /// Sends what the carry holds, even if shorter than a full message (end of the run).
  mutating func flush(send: (UnsafeRawBufferPointer) throws(SinkError) -> Bool)
    throws(SinkError) -> Progress
  {
    guard carryCount > 0 else { return .complete }
    guard try send(UnsafeRawBufferPointer(rebasing: carry[0..<carryCount])) else {
      return .blocked
    }
    carryCount = 0
    return .complete
  }

  /// Forgets the carry and any half-sent unit (the connection they belonged to is gone).
  mutating func reset() {
    carryCount = 0
    resume = nil
  }
}
