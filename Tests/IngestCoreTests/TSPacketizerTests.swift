import Testing

@testable import IngestCore

@Suite struct TSPacketizerTests {
  static let h264 = AnnexBTests.format(4)
  static let stereo = try! AACFormat(objectType: 2, sampleRate: 48000, channels: 2)
  static let full = TSProgram(video: h264, audioApp: stereo, audioMic: stereo)
  static let audioOnly = TSProgram(audioApp: stereo)

  static func payload(_ count: Int, seed: Int = 1) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed) }
  }

  /// Packetizes into a buffer of exactly the advertised bound and returns the bytes written.
  static func packetize(
    _ program: TSProgram, kind: SampleKind, pts: Int64 = 90_000, dts: Int64? = nil,
    isKeyframe: Bool = false, payload: [UInt8]
  ) throws -> (bytes: [UInt8], unit: PacketizedUnit, bound: Int) {
    let packetizer = TSPacketizer(program: program)
    let bound = packetizer.maximumPacketizedSize(payloadSize: payload.count, kind: kind)
    var out = [UInt8](repeating: 0xEE, count: bound)
    let unit = try payload.withUnsafeBytes { input in
      try out.withUnsafeMutableBytes { buffer in
        try packetizer.packetize(
          kind: kind, pts: pts, dts: dts ?? pts, isKeyframe: isKeyframe, payload: input,
          into: buffer)
      }
    }
    return (Array(out[0..<unit.byteCount]), unit, bound)
  }

  static func audioPES(pts: Int64, format: AACFormat, frame: [UInt8]) throws -> [UInt8] {
    let adts = try ADTSHeader(format: format, payloadSize: frame.count)
    return TSPESHeaderTests.header(
      PESHeader(streamID: 0xC0, pts: pts), payloadSize: adts.frameLength) + adts.bytes + frame
  }

  /// Checks the packet structure every unit must have and returns the reassembled PES.
  static func checkStructure(
    _ bytes: [UInt8], unit: PacketizedUnit, pid: UInt16, onPCRPID: Bool, randomAccess: Bool
  ) -> [UInt8] {
    #expect(bytes.count % 188 == 0)
    #expect(unit.byteCount == unit.packetCount * 188)
    let packets = TSReader.packets(bytes)
    #expect(packets.count == unit.packetCount)
    for (index, packet) in packets.enumerated() {
      #expect(packet.sync == 0x47)
      #expect(packet.pid == pid)
      #expect(packet.unitStart == (index == 0))
      #expect(packet.counter == 0)
      #expect(packet.hasPayload)
      if let length = packet.fieldLength, length > 1 {
        // Stuffing is 0xFF; on the PCR PID the empty PCR slot is stuffing too.
        #expect(packet.field.dropFirst().allSatisfy { $0 == 0xFF })
      }
      if index > 0, let length = packet.fieldLength, length > 0 {
        #expect(packet.flags == 0)
      }
    }
    let first = packets[0]
    #expect(first.control == 3)
    #expect((first.fieldLength ?? 0) >= (onPCRPID ? 7 : 1))
    #expect(first.flags == (randomAccess ? 0x40 : 0x00))
    // Only the last packet may be short of payload.
    for packet in packets.dropFirst().dropLast() { #expect(packet.payload.count == 184) }
    return TSReader.payload(packets)
  }

  @Test(arguments: [true, false])
  func audioOfEverySizeUpTo400Reassembles(onPCRPID: Bool) throws {
    let program = onPCRPID ? Self.audioOnly : Self.full
    for size in 0...400 {
      let frame = Self.payload(size, seed: size)
      let (bytes, unit, bound) = try Self.packetize(program, kind: .audioApp, payload: frame)
      #expect(unit.byteCount <= bound)
      let pes = Self.checkStructure(
        bytes, unit: unit, pid: 0x101, onPCRPID: onPCRPID, randomAccess: true)
      #expect(pes == (try Self.audioPES(pts: 90_000, format: Self.stereo, frame: frame)))
    }
  }

  /// PES of 21 + n bytes on a non-PCR PID: 182 fit the first packet, 184 each further one.
  @Test func stuffingEdgeCases() throws {
    func lastPacket(_ size: Int) throws -> TSReader.Packet {
      let (bytes, _, _) = try Self.packetize(
        Self.full, kind: .audioMic, payload: Self.payload(size))
      return TSReader.packets(bytes).last!
    }
    // Exactly one full packet: the adaptation field is just length and flags.
    let exact = try Self.packetize(Self.full, kind: .audioMic, payload: Self.payload(161))
    #expect(exact.unit.packetCount == 1)
    #expect(TSReader.packets(exact.bytes)[0].fieldLength == 1)
    // One byte over: a second packet with 1 payload byte and 182 bytes of stuffing.
    let over = try lastPacket(162)
    #expect(over.fieldLength == 182)
    #expect(over.payload.count == 1)
    // 1 byte of stuffing: adaptation field of only its length byte, 0.
    let one = try lastPacket(344)
    #expect(one.control == 3)
    #expect(one.fieldLength == 0)
    #expect(one.payload.count == 183)
    // 2 bytes of stuffing: length 1, flags 0.
    let two = try lastPacket(343)
    #expect(two.fieldLength == 1)
    #expect(two.field == [0x00])
    #expect(two.payload.count == 182)
    // No stuffing: payload only.
    let none = try lastPacket(345)
    #expect(none.control == 1)
    #expect(none.payload.count == 184)
  }

  @Test func pcrPIDReservesEmptySlot() throws {
    let (bytes, _, _) = try Self.packetize(
      Self.full, kind: .video, isKeyframe: true,
      payload: AnnexBTests.avcc([Self.payload(1000)], lengthSize: 4))
    let first = Array(bytes[0..<12])
    // sync, PUSI + PID 0x100, AF + payload CC 0, AF length 7, RAI (PCR_flag 0), 6 x 0xFF
    #expect(first == [0x47, 0x41, 0x00, 0x30, 0x07, 0x40, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
    #expect(Array(bytes[12..<16]) == [0x00, 0x00, 0x01, 0xE0])
  }

  @Test func nonPCRAudioHasFlagsOnlyField() throws {
    let (bytes, _, _) = try Self.packetize(Self.full, kind: .audioMic, payload: Self.payload(500))
    #expect(Array(bytes[0..<6]) == [0x47, 0x41, 0x02, 0x30, 0x01, 0x40])
    #expect(Array(bytes[6..<10]) == [0x00, 0x00, 0x01, 0xC0])
  }

  @Test(arguments: [0, 1, 150, 170, 171, 500, 4000, 70_000])
  func videoReassemblesToPES(sliceSize: Int) throws {
    let nals = [AnnexBTests.sei, [0x65] + Self.payload(sliceSize)]
    let sample = AnnexBTests.avcc(nals, lengthSize: 4)
    let (bytes, unit, bound) = try Self.packetize(
      Self.full, kind: .video, pts: 93_000, dts: 90_000, isKeyframe: true, payload: sample)
    #expect(unit.byteCount <= bound)
    let pes = Self.checkStructure(bytes, unit: unit, pid: 0x100, onPCRPID: true, randomAccess: true)
    let es = try AnnexBTests.convert(sample, lengthSize: 4, isKeyframe: true)
    let header = TSPESHeaderTests.header(
      PESHeader(streamID: 0xE0, pts: 93_000, dts: 90_000), payloadSize: es.count)
    #expect(pes == header + es)
    #expect(pes[7] == 0xC0)  // PTS and DTS
  }

  @Test func videoWithoutReorderingHasPTSOnlyAndNoRandomAccess() throws {
    let sample = AnnexBTests.avcc([AnnexBTests.nonReferenceSlice], lengthSize: 4)
    let (bytes, unit, _) = try Self.packetize(Self.full, kind: .video, payload: sample)
    let pes = Self.checkStructure(
      bytes, unit: unit, pid: 0x100, onPCRPID: true, randomAccess: false)
    #expect(pes[7] == 0x80)
    #expect(pes[8] == 5)
  }

  @Test func audioOnlyVideoPIDAbsent() throws {
    let (bytes, unit, _) = try Self.packetize(
      Self.audioOnly, kind: .video, payload: AnnexBTests.avcc([AnnexBTests.pSlice], lengthSize: 4))
    #expect(unit == .empty)
    #expect(bytes.isEmpty)
  }

  @Test func malformedInputThrows() {
    let bad: [UInt8] = [0x00, 0x00, 0x00, 0x09, 0x41]
    #expect(throws: FormatError.nalLengthPastEnd(offset: 0, length: 9)) {
      try Self.packetize(Self.full, kind: .video, payload: bad)
    }
    #expect(throws: FormatError.aacFrameTooLarge(9000)) {
      try Self.packetize(Self.full, kind: .audioApp, payload: Self.payload(9000))
    }
  }

  @Test func timestampsAreWrittenModulo2To33() throws {
    let (bytes, _, _) = try Self.packetize(
      Self.full, kind: .audioApp, pts: 1 << 33 + 4_500, payload: Self.payload(10))
    let pes = TSReader.payload(TSReader.packets(bytes))
    #expect(pes.withUnsafeBytes { PESHeader.readTimestamp($0, at: 9) } == 4_500)
  }

  @Test func boundCoversWorstCaseVideo() throws {
    for lengthSize in [1, 2, 4] {
      let format = AnnexBTests.format(lengthSize)
      let program = TSProgram(video: format)
      let sample = AnnexBTests.avcc(Array(repeating: [0x41], count: 3000), lengthSize: lengthSize)
      let packetizer = TSPacketizer(program: program)
      let bound = TSPacketizer.maximumPacketizedSize(
        payloadSize: sample.count, kind: .video, format: .h264(format))
      var out = [UInt8](repeating: 0, count: bound)
      let unit = try sample.withUnsafeBytes { input in
        try out.withUnsafeMutableBytes {
          try packetizer.packetize(
            kind: .video, pts: 0, dts: 0, isKeyframe: true, payload: input, into: $0)
        }
      }
      #expect(unit.byteCount <= bound)
      #expect(bound - unit.byteCount < 2 * 188)
    }
  }

  /// `layout` measures exactly what `write` fills, from the reader's summary without a walk; a
  /// summary of another payload is refused, not trusted.
  @Test func layoutIsExactAndWriteRefusesAnotherPayload() throws {
    let packetizer = TSPacketizer(program: Self.full)
    let sample = AnnexBTests.avcc([AnnexBTests.idr, AnnexBTests.pSlice], lengthSize: 4)
    var other = sample
    other[3] = 0xFF  // the first NAL now claims more bytes than the sample holds
    try sample.withUnsafeBytes { input in
      let summary = try AVCCScanner.summarize(input, lengthSize: 4)
      let layout = try #require(
        try packetizer.layout(
          kind: .video, pts: 90_000, dts: 90_000, isKeyframe: true, payload: input,
          nalUnits: summary))
      var out = [UInt8](repeating: 0, count: layout.byteCount)
      let unit = try out.withUnsafeMutableBytes {
        try packetizer.write(layout, payload: input, into: $0)
      }
      #expect(unit.byteCount == layout.byteCount)
      let (expected, _, _) = try Self.packetize(
        Self.full, kind: .video, isKeyframe: true, payload: sample)
      #expect(out == expected)
      // Same size, a bad NAL length: the write notices instead of reading past the sample.
      let refusedBadLength = other.withUnsafeBytes { wrong in
        out.withUnsafeMutableBytes { buffer in
          (try? packetizer.write(layout, payload: wrong, into: buffer)) == nil
        }
      }
      #expect(refusedBadLength)
      let short = UnsafeRawBufferPointer(rebasing: input[..<(input.count - 1)])
      let refusedShort = out.withUnsafeMutableBytes { buffer in
        (try? packetizer.write(layout, payload: short, into: buffer)) == nil
      }
      #expect(refusedShort)
    }
  }
}
