import Testing

@testable import IngestCore

/// A minimal transport stream reader the tests use to look at what the writer produced.
struct TSReader {
  struct Packet {
    var sync: UInt8
    var pid: UInt16
    var unitStart: Bool
    /// adaptation_field_control, 1...3.
    var control: UInt8
    var counter: UInt8
    /// adaptation_field_length, or nil without an adaptation field.
    var fieldLength: Int?
    /// The adaptation field after its length byte.
    var field: [UInt8]
    var payload: [UInt8]

    var hasPayload: Bool { control & 1 != 0 }
    var flags: UInt8 { field.first ?? 0 }
    var pcr: Int64? {
      guard field.count >= 7, flags & 0x10 != 0 else { return nil }
      var base: Int64 = 0
      for index in 1...4 { base = base << 8 | Int64(field[index]) }
      return base << 1 | Int64(field[5] >> 7)
    }
  }

  /// Splits whole packets; the tests check `bytes.count % 188 == 0` themselves.
  static func packets(_ bytes: [UInt8]) -> [Packet] {
    stride(from: 0, to: bytes.count - 187, by: 188).map { start in
      let b = Array(bytes[start..<start + 188])
      let control = b[3] >> 4 & 3
      var fieldLength: Int?
      var field: [UInt8] = []
      var payloadStart = 4
      if control & 2 != 0 {
        let length = Int(b[4])
        fieldLength = length
        field = Array(b[5..<min(188, 5 + length)])
        payloadStart = 5 + length
      }
      return Packet(
        sync: b[0], pid: UInt16(b[1] & 0x1F) << 8 | UInt16(b[2]), unitStart: b[1] & 0x40 != 0,
        control: control, counter: b[3] & 0x0F, fieldLength: fieldLength, field: field,
        payload: control & 1 != 0 && payloadStart < 188 ? Array(b[payloadStart...]) : [])
    }
  }

  /// The payload bytes of `packets`, concatenated.
  static func payload(_ packets: some Sequence<Packet>) -> [UInt8] {
    packets.reduce(into: []) { $0 += $1.payload }
  }

  /// PID -> counter errors: a payload packet whose counter is not the previous one plus 1.
  static func continuityErrors(_ packets: [Packet]) -> [UInt16: Int] {
    var last: [UInt16: UInt8] = [:]
    var errors: [UInt16: Int] = [:]
    for packet in packets {
      if let previous = last[packet.pid] {
        let expected = packet.hasPayload ? (previous + 1) & 0x0F : previous
        if packet.counter != expected { errors[packet.pid, default: 0] += 1 }
      }
      last[packet.pid] = packet.counter
    }
    return errors
  }
}

@Suite struct TSReaderTests {
  @Test func readsHeaderFieldsAndPCR() {
    var bytes = [UInt8](repeating: 0xFF, count: 188)
    bytes.withUnsafeMutableBytes {
      TSPacket.writeHeader($0, at: 0, pid: 0x101, unitStart: true, adaptationFieldControl: 0x20)
      TSPacket.writeAdaptationField($0, at: 4, size: 184, flags: 0x10)
      TSPacket.writePCR($0, at: 6, base: 123_456_789)
    }
    bytes[3] |= 0x0A
    let packet = TSReader.packets(bytes)[0]
    #expect(packet.sync == 0x47)
    #expect(packet.pid == 0x101)
    #expect(packet.unitStart)
    #expect(packet.control == 2)
    #expect(packet.counter == 0x0A)
    #expect(packet.fieldLength == 183)
    #expect(packet.pcr == 123_456_789)
    #expect(packet.payload.isEmpty)
  }

  @Test func continuityCheckIgnoresPacketsWithoutPayload() {
    func packet(_ counter: UInt8, payload: Bool) -> TSReader.Packet {
      TSReader.Packet(
        sync: 0x47, pid: 0x100, unitStart: false, control: payload ? 1 : 2, counter: counter,
        fieldLength: nil, field: [], payload: [])
    }
    let good = [packet(3, payload: true), packet(3, payload: false), packet(4, payload: true)]
    #expect(TSReader.continuityErrors(good).isEmpty)
    let bad = [packet(3, payload: true), packet(5, payload: true)]
    #expect(TSReader.continuityErrors(bad) == [0x100: 1])
  }
}
