/// Streams records out of a captured-sample dump (`docs/dump-format.md`) with bounded memory.
///
/// The reader holds one buffer with the current record and reuses it for the next one. The buffer
/// grows only as bytes actually arrive, by at most `readChunk` bytes beyond them, so a corrupt length
/// field can make it neither allocate nor wait for more than the input really holds; a length above
/// `DumpFormat.maximumPayloadSize` is an error before any byte of the payload is read. Once the
/// buffer has reached the size of the largest sample, reading samples allocates nothing.
///
/// ```
/// buffer: | type | length u32 | payload ........................... | CRC u32 | (unused) |
///         0      1            5                                     5+length
/// sample payload: | kind | flags | pts i64 | ts i32 | dts i64 | ts i32 | encoded bytes ... |
///                 5      6       7                                     31 = payloadStart
/// ```
public struct DumpReader<Source: ByteSource> {
  /// How many bytes are requested from the source at most per read.
  public static var readChunk: Int { 64 * 1024 }

  /// The source; exposed so the owner can close it.
  public private(set) var source: Source
  /// Byte offset of the next record (after `next()` returned), or of the failed record.
  public private(set) var offset: Int64 = 0
  /// How many records of unknown type were skipped (forward compatibility).
  public private(set) var skippedRecords = 0
  /// Bytes this reader holds, for the memory ledger.
  public var bufferCapacity: Int { buffer.capacity }

  private var buffer: [UInt8] = []
  private var headerRead = false
  private var failure: DumpError?
  private var formats: [FormatDescription?] = [nil, nil, nil]
  private var current: DumpSampleHeader?
  private static var payloadStart: Int { DumpFormat.recordHeaderSize + DumpFormat.sampleHeaderSize }

  /// Creates a reader; the header is read and checked by the first `next()`.
  public init(source: Source) {
    self.source = source
  }

  /// The format record most recently read for `kind`.
  public func format(for kind: SampleKind) -> FormatDescription? { formats[Int(kind.rawValue)] }

  /// Reads the next record.
  ///
  /// - Returns: the record, or `nil` at a clean end of input (on a record boundary).
  /// - Throws: `DumpError`. After a recoverable error the bad record has been skipped and `next()`
  ///   may be called again; after a fatal one every later call throws the same error.
  public mutating func next() throws(DumpError) -> DumpRecord? {
    if let failure { throw failure }
    current = nil
    do {
      if !headerRead { try readHeader() }
      return try readRecord()
    } catch {
      if !error.isRecoverable { failure = error }
      throw error
    }
  }

  /// Calls `body` with the encoded bytes of the sample that `next()` last returned (empty when the
  /// last record was not a sample). The bytes are valid only until the next `next()`.
  public func withPayload<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    guard let current else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
    return try buffer.withUnsafeBytes { raw in
      try body(
        UnsafeRawBufferPointer(
          rebasing: raw[Self.payloadStart..<Self.payloadStart + current.payloadSize]))
    }
  }

  /// A copy of the sample that `next()` last returned, or `nil` if the last record was no sample.
  /// Allocates the payload array; use `withPayload(_:)` on hot paths.
  public func sampleCopy() -> MediaSample? {
    guard let current else { return nil }
    return MediaSample(
      kind: current.kind, pts: current.pts, dts: current.dts, isKeyframe: current.isKeyframe,
      payload: withPayload { Array($0) })
  }

  private mutating func readHeader() throws(DumpError) {
    let count = try fill(DumpFormat.headerSize, at: 0)
    guard count == DumpFormat.headerSize else {
      let compared = min(count, DumpFormat.magic.count)
      if !buffer[0..<compared].elementsEqual(DumpFormat.magic[0..<compared]) {
        throw .badMagic
      }
      throw .truncated(offset: 0)
    }
    guard buffer[0..<8].elementsEqual(DumpFormat.magic) else { throw .badMagic }
    let version = UInt16(buffer[8]) | UInt16(buffer[9]) << 8
    guard version == DumpFormat.version else { throw .unsupportedVersion(version) }
    headerRead = true
    offset = Int64(DumpFormat.headerSize)
  }

  private mutating func readRecord() throws(DumpError) -> DumpRecord? {
    while true {
      let recordOffset = offset
      let headerCount = try fill(DumpFormat.recordHeaderSize, at: 0)
      if headerCount == 0 { return nil }
      guard headerCount == DumpFormat.recordHeaderSize else {
        throw .truncated(offset: recordOffset)
      }
      let type = buffer[0]
      let length = Int(load(UInt32.self, at: 1))
      guard length <= DumpFormat.maximumPayloadSize else {
        throw .recordTooLarge(offset: recordOffset, size: length)
      }
      let rest = length + DumpFormat.crcSize
      guard try fill(rest, at: DumpFormat.recordHeaderSize) == rest else {
        throw .truncated(offset: recordOffset)
      }
      let end = DumpFormat.recordHeaderSize + length
      let crc = buffer.withUnsafeBytes {
        MPEGCRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[..<end]))
      }
      guard crc == load(UInt32.self, at: end) else {
        throw .crcMismatch(offset: recordOffset, recordType: type)
      }
      offset = recordOffset + Int64(end + DumpFormat.crcSize)
      switch DumpFormat.RecordType(rawValue: type) {
      case .format: return try decodeFormat(length: length, at: recordOffset)
      case .sample: return try decodeSample(length: length, at: recordOffset)
      case .event: return try decodeEvent(length: length, at: recordOffset)
      case nil: skippedRecords += 1
      }
    }
  }

  private mutating func decodeFormat(length: Int, at recordOffset: Int64) throws(DumpError)
    -> DumpRecord
  {
    let type = DumpFormat.RecordType.format.rawValue
    guard length >= DumpFormat.formatHeaderSize else {
      throw .malformedRecord(offset: recordOffset, recordType: type, reason: "shorter than 2 bytes")
    }
    let base = DumpFormat.recordHeaderSize
    guard let kind = SampleKind(rawValue: buffer[base]) else {
      throw .unknownKind(offset: recordOffset, kind: buffer[base])
    }
    guard let codec = DumpFormat.Codec(rawValue: buffer[base + 1]) else {
      throw .unknownCodec(offset: recordOffset, codec: buffer[base + 1])
    }
    guard (codec == .h264) == (kind == .video) else {
      throw .malformedRecord(
        offset: recordOffset, recordType: type, reason: "codec \(codec) does not fit \(kind)")
    }
    let config = buffer[(base + DumpFormat.formatHeaderSize)..<(base + length)]
    let format: FormatDescription
    do {
      switch codec {
      case .h264: format = .h264(try H264Format(avcC: config))
      case .aac: format = .aac(try AACFormat(audioSpecificConfig: config))
      }
    } catch {
      throw .format(offset: recordOffset, error)
    }
    formats[Int(kind.rawValue)] = format
    return .format(kind, format)
  }

  private mutating func decodeSample(length: Int, at recordOffset: Int64) throws(DumpError)
    -> DumpRecord
  {
    let type = DumpFormat.RecordType.sample.rawValue
    guard length >= DumpFormat.sampleHeaderSize else {
      throw .malformedRecord(
        offset: recordOffset, recordType: type, reason: "shorter than its 26-byte header")
    }
    let base = DumpFormat.recordHeaderSize
    guard let kind = SampleKind(rawValue: buffer[base]) else {
      throw .unknownKind(offset: recordOffset, kind: buffer[base])
    }
    let flags = buffer[base + 1]
    let pts = MediaTime(
      value: load(Int64.self, at: base + 2), timescale: load(Int32.self, at: base + 10))
    var dts: MediaTime?
    if flags & DumpFormat.hasDTSFlag != 0 {
      dts = MediaTime(
        value: load(Int64.self, at: base + 14), timescale: load(Int32.self, at: base + 22))
    }
    guard pts.isValid, dts?.isValid ?? true else { throw .invalidTimestamp(offset: recordOffset) }
    let payloadSize = length - DumpFormat.sampleHeaderSize
    guard payloadSize > 0 else {
      throw .malformedRecord(offset: recordOffset, recordType: type, reason: "empty sample payload")
    }
    guard let format = formats[Int(kind.rawValue)] else {
      throw .missingFormat(offset: recordOffset, kind: kind)
    }
    if case .h264(let h264) = format {
      let error = buffer.withUnsafeBytes { raw in
        DumpFormat.validateNALUnits(
          UnsafeRawBufferPointer(
            rebasing: raw[Self.payloadStart..<Self.payloadStart + payloadSize]),
          lengthSize: h264.nalLengthSize)
      }
      if let error { throw .format(offset: recordOffset, error) }
    }
    let header = DumpSampleHeader(
      kind: kind, pts: pts, dts: dts, isKeyframe: flags & DumpFormat.keyframeFlag != 0,
      payloadSize: payloadSize)
    current = header
    return .sample(header)
  }

  private mutating func decodeEvent(length: Int, at recordOffset: Int64) throws(DumpError)
    -> DumpRecord
  {
    let type = DumpFormat.RecordType.event.rawValue
    guard length >= DumpFormat.eventSize else {
      throw .malformedRecord(
        offset: recordOffset, recordType: type, reason: "shorter than its 14-byte body")
    }
    let base = DumpFormat.recordHeaderSize
    guard let kind = SampleKind(rawValue: buffer[base]) else {
      throw .unknownKind(offset: recordOffset, kind: buffer[base])
    }
    guard let code = DumpEvent.Code(rawValue: buffer[base + 1]) else {
      throw .unknownEvent(offset: recordOffset, code: buffer[base + 1])
    }
    let time = MediaTime(
      value: load(Int64.self, at: base + 2), timescale: load(Int32.self, at: base + 10))
    guard time.isValid else { throw .invalidTimestamp(offset: recordOffset) }
    guard kind.isAudio else {
      throw .malformedRecord(
        offset: recordOffset, recordType: type, reason: "audio interruption on the video track")
    }
    switch code {
    case .audioInterruptionBegan: return .event(.audioInterruptionBegan(kind, at: time))
    case .audioInterruptionEnded: return .event(.audioInterruptionEnded(kind, at: time))
    }
  }

  private func load<T: FixedWidthInteger>(_: T.Type, at position: Int) -> T {
    buffer.withUnsafeBytes {
      T(littleEndian: $0.loadUnaligned(fromByteOffset: position, as: T.self))
    }
  }

  /// Reads up to `count` bytes into `buffer[start...]`, growing the buffer by at most `readChunk`
  /// bytes ahead of what has arrived. Returns how many bytes arrived (less only at end of input).
  private mutating func fill(_ count: Int, at start: Int) throws(DumpError) -> Int {
    var filled = 0
    // The buffer is moved out so the source can be called while its memory is borrowed.
    var storage: [UInt8] = []
    swap(&storage, &buffer)
    defer { swap(&storage, &buffer) }
    while filled < count {
      let from = start + filled
      // Space already held is used first; the buffer grows only once it is full of arrived bytes.
      if storage.count <= from {
        let grow = min(count - filled, Self.readChunk)
        storage.append(contentsOf: repeatElement(0, count: from + grow - storage.count))
      }
      let want = min(count - filled, storage.count - from)
      let end = from + want
      let got: Int
      do {
        got = try storage.withUnsafeMutableBytes { raw in
          try source.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[from..<end]))
        }
      } catch {
        throw .io(offset: offset + Int64(from), description: "\(error)")
      }
      guard got > 0 else { break }
      guard got <= want else {
        throw .io(
          offset: offset + Int64(from),
          description: "source returned \(got) bytes for a \(want)-byte buffer")
      }
      filled += got
    }
    return filled
  }
}
