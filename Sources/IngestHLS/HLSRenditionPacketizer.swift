import IngestCore

/// One rendition's transport stream, made from its access units on the sender's thread: a
/// program of that track alone (its own PAT and PMT, the PCR on its PID), packetized and
/// finished by the same `TSPacketizer` and `TSOutputStream` the ring's transport stream uses.
///
/// The packets go through one buffer, the unit's packets after room for the longest prefix,
/// made at the start for the run's largest sample (so it is in the memory ledger); a larger unit
/// (not one the pipeline admits) would grow it.
struct HLSRenditionPacketizer {
  private var packetizer: TSPacketizer
  private var output: TSOutputStream
  private var buffer: [UInt8]
  private let prefixRoom = TSOutputStream.maximumPrefixSize

  /// What the buffer holds at least: any AAC frame's packets (and small video frames').
  static let smallestBufferBytes = 64 << 10

  /// The buffer's bytes for samples of up to `largestSample` bytes: their packets (184 payload
  /// bytes in each 188, with room for the PES header, adaptation fields and parameter sets)
  /// after the longest prefix.
  static func bufferBytes(forSamplesUpTo largestSample: Int) -> Int {
    let packets = (largestSample + 1024) / 176 + 2
    return max(smallestBufferBytes, TSOutputStream.maximumPrefixSize + packets * 188)
  }

  init(program: TSProgram, largestSample: Int) {
    packetizer = TSPacketizer(program: program)
    output = TSOutputStream(program: program)
    buffer = [UInt8](repeating: 0, count: Self.bufferBytes(forSamplesUpTo: largestSample))
  }

  /// Bytes held: the buffer and the stream's PSI packets.
  var residentBytes: Int { buffer.count + output.residentByteCount }

  /// PAT and PMT go in front of the next unit, which can then start a segment.
  mutating func forcePSI() { output.forcePSI() }

  /// Packetizes `unit` (whose access unit is `payload`) and hands its packets, PAT/PMT and PCR
  /// packets first, to `body` with the length of that prefix. A unit the packetizer cannot
  /// read (a malformed access unit, a track outside the program) gives nil.
  mutating func packetize<Result>(
    _ unit: OutgoingUnit, payload: UnsafeRawBufferPointer,
    _ body: (_ prefixLength: Int, _ bytes: UnsafeRawBufferPointer) throws(SinkError) -> Result
  ) throws(SinkError) -> Result? {
    if let format = unit.format { packetizer.update(format, for: unit.kind) }
    let layout: TSPacketizer.Layout
    do {
      guard
        let measured = try packetizer.layout(
          kind: unit.kind, pts: unit.pts, dts: unit.dts, isKeyframe: unit.isKeyframe,
          payload: payload)
      else { return nil }
      layout = measured
    } catch {
      return nil
    }
    if buffer.count < prefixRoom + layout.byteCount {
      buffer = [UInt8](repeating: 0, count: prefixRoom + layout.byteCount)
    }
    let room = prefixRoom
    let packetizer = self.packetizer
    var output = self.output
    defer { self.output = output }
    // `withUnsafeMutableBytes` rethrows untyped errors: the body's own goes out as a value.
    let outcome = buffer.withUnsafeMutableBytes { raw -> Swift.Result<Result, SinkError>? in
      let packets = UnsafeMutableRawBufferPointer(
        rebasing: raw[room..<(room + layout.byteCount)])
      do {
        _ = try packetizer.write(layout, payload: payload, into: packets)
      } catch {
        return nil
      }
      let prefix = UnsafeMutableRawBufferPointer(rebasing: raw[0..<room])
      let prefixLength = output.prepare(
        unit: packets, kind: unit.kind, dts: unit.dts, isKeyframe: unit.isKeyframe,
        discontinuity: unit.isDiscontinuity, prefix: prefix)
      // The prefix right before the unit's packets, so that both are one run of bytes; from
      // the end, as the two places may overlap.
      for index in stride(from: prefixLength - 1, through: 0, by: -1) {
        raw[room - prefixLength + index] = raw[index]
      }
      let start = room - prefixLength
      let bytes = UnsafeRawBufferPointer(rebasing: raw[start..<(room + layout.byteCount)])
      do throws(SinkError) {
        return .success(try body(prefixLength, bytes))
      } catch {
        return .failure(error)
      }
    }
    switch outcome {
    case .success(let value)?: return value
    case .failure(let error)?: throw error
    case nil: return nil
    }
  }
}
