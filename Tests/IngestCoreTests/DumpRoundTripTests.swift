import Testing

@testable import IngestCore

@Suite struct DumpRoundTripTests {
  @Test func writerToReaderKeepsEverything() throws {
    let (bytes, _) = try DumpFixtures.smallDump()
    var reader = DumpReader(source: MemorySource(bytes))
    #expect(try reader.next() == .format(.video, .h264(DumpFixtures.h264)))
    #expect(try reader.next() == .format(.audioApp, .aac(DumpFixtures.app)))
    #expect(try reader.next() == .format(.audioMic, .aac(DumpFixtures.mic)))
    var samples: [MediaSample] = []
    var events: [DumpEvent] = []
    while let record = try reader.next() {
      switch record {
      case .sample(let header):
        let copy = try #require(reader.sampleCopy())
        #expect(copy.payload.count == header.payloadSize)
        #expect(reader.withPayload { Array($0) } == copy.payload)
        samples.append(copy)
      case .event(let event): events.append(event)
      case .format: Issue.record("unexpected format record")
      }
    }
    #expect(samples.count == DumpFixtures.samples.count)
    for (read, written) in zip(samples, DumpFixtures.samples) {
      #expect(read.kind == written.kind)
      #expect(read.pts == written.pts)
      #expect(read.dts == written.dts)
      #expect(read.isKeyframe == written.isKeyframe)
      #expect(read.payload == written.payload)
    }
    #expect(
      events == [
        .audioInterruptionBegan(.audioMic, at: MediaTime(value: 88200, timescale: 44100)),
        .audioInterruptionEnded(.audioMic, at: MediaTime(value: 441000, timescale: 44100)),
      ])
    #expect(reader.skippedRecords == 1)
    #expect(reader.offset == Int64(bytes.count))
    #expect(try reader.next() == nil)
  }

  @Test func oneByteAtATimeGivesTheSameRecords() throws {
    let (bytes, _) = try DumpFixtures.smallDump()
    let whole = DumpFixtures.readAll(bytes)
    let trickled = DumpFixtures.readAll(bytes, chunk: 1)
    #expect(whole.cleanEnd && trickled.cleanEnd)
    #expect(whole.errors.isEmpty && trickled.errors.isEmpty)
    #expect(trickled.records == whole.records)
    #expect(trickled.payloads == whole.payloads)
    #expect(whole.records.count == 3 + DumpFixtures.samples.count + 2)
  }

  @Test func headerAndRecordLayoutMatchTheDocument() throws {
    // The worked example of docs/dump-format.md: an AAC-LC 48 kHz stereo format record for audioApp.
    var writer = try DumpWriter(sink: MemorySink())
    try writer.writeFormat(.aac(DumpFixtures.app), for: .audioApp)
    let expected: [UInt8] = [
      0x49, 0x4E, 0x47, 0x44, 0x55, 0x4D, 0x50, 0x00, 0x01, 0x00, 0x00, 0x00,
      0x01, 0x04, 0x00, 0x00, 0x00, 0x01, 0x02, 0x11, 0x90,
    ]
    let bytes = writer.sink.bytes
    #expect(Array(bytes.prefix(expected.count)) == expected)
    let crc = MPEGCRC32.checksum(bytes[12..<21])
    #expect(
      Array(bytes[21...]) == [
        UInt8(crc & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 24),
      ])
    #expect(crc == 0x2A18_0989)
  }

  @Test func steadyStateReadingDoesNotGrowTheBuffer() throws {
    var writer = try DumpWriter(sink: MemorySink())
    try writer.writeFormat(.h264(DumpFixtures.h264), for: .video)
    for index in 0..<200 {
      try writer.writeSample(
        MediaSample(
          kind: .video, pts: MediaTime(value: Int64(index), timescale: 30), isKeyframe: index == 0,
          // The first sample is the largest, so the buffer is full-sized after it whatever slack
          // malloc adds (none under AddressSanitizer).
          payload: DumpFixtures.videoPayload(
            UInt8(index & 0xFF), nalSizes: [1000 + (index == 0 ? 6 : index % 7)])))
    }
    var reader = DumpReader(source: MemorySource(writer.sink.bytes, chunk: 333))
    _ = try reader.next()
    _ = try reader.next()
    let capacity = reader.bufferCapacity
    var count = 1
    while try reader.next() != nil { count += 1 }
    #expect(count == 200)
    #expect(reader.bufferCapacity == capacity)
    #expect(capacity <= DumpReader<MemorySource>.readChunk + 8192)  // + malloc rounding
  }
}

@Suite struct DumpDocumentExampleTests {
  @Test func sampleAndEventExamplesMatchTheDocument() throws {
    var writer = try DumpWriter(sink: MemorySink())
    try writer.writeFormat(.aac(DumpFixtures.app), for: .audioApp)
    try writer.writeSample(
      MediaSample(
        kind: .audioApp, pts: MediaTime(value: 1024, timescale: 48000), isKeyframe: true,
        payload: [0x21, 0x10, 0x05]))
    let sampleStart = writer.sink.bytes.count
    try writer.writeEvent(
      .audioInterruptionBegan(.audioMic, at: MediaTime(value: 88200, timescale: 44100)))
    let bytes = writer.sink.bytes
    #expect(sampleStart == 0x3F)
    #expect(Array(bytes[0x19..<0x1E]) == [0x02, 0x1D, 0x00, 0x00, 0x00])
    #expect(Array(bytes[0x38..<0x3F]) == [0x21, 0x10, 0x05, 0xCB, 0x20, 0x14, 0xD5])
    #expect(
      Array(bytes[0x3F...]) == [
        0x03, 0x0E, 0x00, 0x00, 0x00, 0x02, 0x01, 0x88, 0x58, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x44, 0xAC, 0x00, 0x00, 0xF3, 0xF4, 0x0C, 0xAA,
      ])
  }

  /// Records are decoded out of large blocks: reading a dump takes a read per block, not per
  /// record, and a sample spanning two blocks still comes out whole.
  @Test func readsInBlocksNotPerRecord() throws {
    var writer = try DumpWriter(sink: MemorySink())
    try writer.writeFormat(.h264(DumpFixtures.h264), for: .video)
    var payloads: [[UInt8]] = []
    for index in 0..<400 {
      let payload = DumpFixtures.videoPayload(
        UInt8(index & 0xFF), nalSizes: [1500 + index % 11, 100 + index % 5])
      payloads.append(payload)
      try writer.writeSample(
        MediaSample(
          kind: .video, pts: MediaTime(value: Int64(index), timescale: 30), isKeyframe: index == 0,
          payload: payload))
    }
    let bytes = writer.sink.bytes
    var reader = DumpReader(source: MemorySource(bytes))
    _ = try reader.next()
    var index = 0
    while case .sample = try reader.next() {
      #expect(reader.withPayload { Array($0) } == payloads[index])
      index += 1
    }
    #expect(index == payloads.count)
    let blocks = bytes.count / DumpReader<MemorySource>.readChunk + 1
    #expect(reader.source.reads <= blocks + 1)
  }
}
