/// Lays one PES packet out over a run of transport packets and fills their payloads as bytes
/// arrive, so the elementary stream is never copied into an intermediate buffer.
///
/// ```
/// first: 47 PUSI|PID | 3x | AF(len, flags[, 6-byte PCR slot][, stuffing]) | PES bytes ...
/// middle: 47 PID | 1x | 184 PES bytes
/// last:  47 PID | 3x | AF(stuffing) | remaining PES bytes      (1x with no stuffing needed)
/// ```
///
/// A single-packet PES puts its stuffing in the first packet's adaptation field, after the flags
/// (and after the PCR slot on the PCR PID, which is itself stuffing until a PCR is written).
struct PESPacketWriter: PacketByteWriter {
  /// Transport packets the PES occupies.
  let packetCount: Int
  private let out: UnsafeMutableRawBufferPointer
  private let pid: UInt16
  private let lastStuffing: Int
  private var packetIndex = 0
  private(set) var position: Int
  private var packetEnd = TSPacket.size

  /// Packets needed for `pesSize` bytes when the first packet's adaptation field is
  /// `firstFieldSize` bytes.
  static func packetCount(pesSize: Int, firstFieldSize: Int) -> Int {
    let firstCapacity = TSPacket.maximumPayloadSize - firstFieldSize
    guard pesSize > firstCapacity else { return 1 }
    let rest = pesSize - firstCapacity
    return 1 + (rest + TSPacket.maximumPayloadSize - 1) / TSPacket.maximumPayloadSize
  }

  /// Writes the first packet's header and adaptation field.
  ///
  /// - Precondition: `out` holds `packetCount(pesSize:firstFieldSize:)` packets.
  init(
    out: UnsafeMutableRawBufferPointer, pid: UInt16, pesSize: Int, firstFieldSize: Int,
    firstFlags: UInt8
  ) {
    let count = Self.packetCount(pesSize: pesSize, firstFieldSize: firstFieldSize)
    precondition(out.count >= count * TSPacket.size, "output buffer smaller than the PES")
    self.out = out
    self.pid = pid
    self.packetCount = count
    let firstCapacity = TSPacket.maximumPayloadSize - firstFieldSize
    var fieldSize = firstFieldSize
    if count == 1 {
      fieldSize += firstCapacity - pesSize
      lastStuffing = 0
    } else {
      let rest = pesSize - firstCapacity
      lastStuffing = (count - 1) * TSPacket.maximumPayloadSize - rest
    }
    TSPacket.writeHeader(
      out, at: 0, pid: pid, unitStart: true,
      adaptationFieldControl: TSPacket.adaptationAndPayload)
    TSPacket.writeAdaptationField(out, at: TSPacket.headerSize, size: fieldSize, flags: firstFlags)
    position = TSPacket.headerSize + fieldSize
  }

  /// Bytes written once the PES is complete.
  var byteCount: Int { packetCount * TSPacket.size }

  /// True when every payload byte of every packet has been written.
  var isComplete: Bool { packetIndex == packetCount - 1 && position == packetEnd }

  /// Starts the next packet: plain payload, or stuffing first when it is the short last one.
  private mutating func advance() {
    packetIndex += 1
    precondition(packetIndex < packetCount, "more PES bytes than laid out")
    let start = packetIndex * TSPacket.size
    let stuffing = packetIndex == packetCount - 1 ? lastStuffing : 0
    TSPacket.writeHeader(
      out, at: start, pid: pid, unitStart: false,
      adaptationFieldControl: stuffing > 0 ? TSPacket.adaptationAndPayload : TSPacket.payloadOnly)
    if stuffing > 0 {
      TSPacket.writeAdaptationField(out, at: start + TSPacket.headerSize, size: stuffing, flags: 0)
    }
    position = start + TSPacket.headerSize + stuffing
    packetEnd = start + TSPacket.size
  }

  mutating func write(_ bytes: UnsafeRawBufferPointer) {
    guard var source = bytes.baseAddress else { return }
    var remaining = bytes.count
    while remaining > 0 {
      if position == packetEnd { advance() }
      let chunk = min(remaining, packetEnd - position)
      (out.baseAddress! + position).copyMemory(from: source, byteCount: chunk)
      position += chunk
      source += chunk
      remaining -= chunk
    }
  }

  /// Moves past `count` bytes the caller wrote itself at `position` (the PES header, which always
  /// fits in the first packet).
  mutating func skip(_ count: Int) {
    precondition(position + count <= packetEnd)
    position += count
  }

  mutating func write(byte: UInt8) {
    if position == packetEnd { advance() }
    out[position] = byte
    position += 1
  }
}
