/// Streams records out of a captured-sample dump (`docs/dump-format.md`) with bounded memory.
///
/// The reader pulls the source in blocks of up to `readChunk` bytes into one buffer and decodes
/// records where they lie, so a file is read with a few large read(2) calls instead of two per
/// record. A record's bytes stay in place until the next `next()`; the unread rest of the block
/// then moves to the front before the next read. The buffer grows only when it is full of bytes
/// that actually arrived, by `readChunk` at a time, so a corrupt length field can make it neither
/// allocate nor wait for more than the input really holds; a length above
/// `DumpFormat.maximumPayloadSize` is an error before any byte of the payload is read. The buffer
/// thus stays below the largest record plus `readChunk` bytes, and once it has reached that size,
/// reading allocates nothing.
///
/// ```
/// buffer: | consumed | type | length u32 | payload ............ | CRC u32 | next records ... | free |
///         0          head   head+1       head+5                              tail             count
/// sample payload: | kind | flags | pts i64 | ts i32 | dts i64 | ts i32 | encoded bytes ... |
///                 head+5 +6      +7                                     head+31 = payloadStart
/// ```
public struct DumpReader<Source: ByteSource> {
  /// The block size: how many bytes the buffer grows by, and so the most read ahead of a record.
  /// A memory ledger reserves the largest record plus this.
  public static var readChunk: Int { 256 * 1024 }

  /// The source; exposed so the owner can close it.
  public private(set) var source: Source
  /// Byte offset of the next record (after `next()` returned), or of the failed record.
  public private(set) var offset: Int64 = 0
  /// How many records of unknown type were skipped (forward compatibility).
  public private(set) var skippedRecords = 0
  /// Bytes this reader holds, for the memory ledger.
  public var bufferCapacity: Int { buffer.capacity }

  private var buffer = DumpReadBuffer()
  /// Where the current record starts in `buffer`.
  private var head = 0
  /// The end of the bytes read into `buffer`.
  private var tail = 0
  /// Input offset of `buffer[0]` (for error messages).
  private var offsetOfBuffer: Int64 = 0
  /// Bytes of the record `next()` returned, left in place for `withPayload`.
  private var consumed = 0
  private var headerRead = false
  private var failure: DumpError?
  private var formats: [FormatDescription?] = [nil, nil, nil]
  private var current: DumpSampleHeader?
  private let checksum: RecordChecksum
  private static var payloadStart: Int { DumpFormat.recordHeaderSize + DumpFormat.sampleHeaderSize }

  /// Creates a reader; the header is read and checked by the first `next()`.
  /// - Parameter checksum: how the records' CRCs are computed: every byte of the dump goes
  ///   through it, so a replay passes the CPU's fastest (`IngestPOSIX`'s `.cpu`).
  public init(source: Source, checksum: RecordChecksum = .portable) {
    self.source = source
    self.checksum = checksum
  }

  /// The kind of the sample record that the last `next()` refused with a recoverable error, when
  /// the record got as far as naming one: a lost video frame means the frames after it wait for
  /// a keyframe.
  public private(set) var refusedSampleKind: SampleKind?
  /// The kind of the format record that the last `next()` refused with a recoverable error: a
  /// configuration the writer cannot carry, so that track has no format.
  public private(set) var refusedFormatKind: SampleKind?

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
    refusedSampleKind = nil
    refusedFormatKind = nil
    head += consumed
    consumed = 0
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
    let start = head + Self.payloadStart
    return try withExtendedLifetime(buffer) {
      try body(buffer.span(start..<start + current.payloadSize))
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
    let count = try fill(DumpFormat.headerSize)
    guard count == DumpFormat.headerSize else {
      let compared = min(count, DumpFormat.magic.count)
      if !buffer.span(head..<head + compared).elementsEqual(DumpFormat.magic[0..<compared]) {
        throw .badMagic
      }
      throw .truncated(offset: 0)
    }
    guard buffer.span(head..<head + 8).elementsEqual(DumpFormat.magic) else { throw .badMagic }
    let version = UInt16(buffer[head + 8]) | UInt16(buffer[head + 9]) << 8
    guard version == DumpFormat.version else { throw .unsupportedVersion(version) }
    headerRead = true
    head += DumpFormat.headerSize
    offset = Int64(DumpFormat.headerSize)
  }

  private mutating func readRecord() throws(DumpError) -> DumpRecord? {
    while true {
      let recordOffset = offset
      let headerCount = try fill(DumpFormat.recordHeaderSize)
      if headerCount == 0 { return nil }
      guard headerCount == DumpFormat.recordHeaderSize else {
        throw .truncated(offset: recordOffset)
      }
      let type = buffer[head]
      let length = Int(buffer.load(UInt32.self, at: head + 1))
      guard length <= DumpFormat.maximumPayloadSize else {
        throw .recordTooLarge(offset: recordOffset, size: length)
      }
      let end = DumpFormat.recordHeaderSize + length
      let total = end + DumpFormat.crcSize
      guard try fill(total) == total else {
        throw .truncated(offset: recordOffset)
      }
      let crc = checksum.update(0xFFFF_FFFF, buffer.span(head..<head + end))
      guard crc == buffer.load(UInt32.self, at: head + end) else {
        throw .crcMismatch(offset: recordOffset, recordType: type)
      }
      offset = recordOffset + Int64(total)
      // The record stays where it is until the next call; `consumed` moves `head` past it then.
      consumed = total
      switch DumpFormat.RecordType(rawValue: type) {
      case .format: return try decodeFormat(length: length, at: recordOffset)
      case .sample: return try decodeSample(length: length, at: recordOffset)
      case .event: return try decodeEvent(length: length, at: recordOffset)
      case nil:
        skippedRecords += 1
        head += consumed
        consumed = 0
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
    let base = head + DumpFormat.recordHeaderSize
    guard let kind = SampleKind(rawValue: buffer[base]) else {
      throw .unknownKind(offset: recordOffset, kind: buffer[base])
    }
    refusedFormatKind = kind
    guard let codec = DumpFormat.Codec(rawValue: buffer[base + 1]) else {
      throw .unknownCodec(offset: recordOffset, codec: buffer[base + 1])
    }
    guard codec.isVideo == (kind == .video) else {
      throw .malformedRecord(
        offset: recordOffset, recordType: type, reason: "codec \(codec) does not fit \(kind)")
    }
    let config = buffer.span((base + DumpFormat.formatHeaderSize)..<(base + length))
    let format: FormatDescription
    do {
      switch codec {
      case .h264: format = .h264(try H264Format(avcC: config))
      case .hevc: format = .hevc(try HEVCFormat(hvcC: config))
      case .aac: format = .aac(try AACFormat(audioSpecificConfig: config))
      }
    } catch {
      throw .format(offset: recordOffset, error)
    }
    refusedFormatKind = nil
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
    let base = head + DumpFormat.recordHeaderSize
    guard let kind = SampleKind(rawValue: buffer[base]) else {
      throw .unknownKind(offset: recordOffset, kind: buffer[base])
    }
    // Until the record is accepted, a throw below refuses a sample of this kind.
    refusedSampleKind = kind
    let flags = buffer[base + 1]
    let pts = MediaTime(
      value: buffer.load(Int64.self, at: base + 2),
      timescale: buffer.load(Int32.self, at: base + 10))
    var dts: MediaTime?
    if flags & DumpFormat.hasDTSFlag != 0 {
      dts = MediaTime(
        value: buffer.load(Int64.self, at: base + 14),
        timescale: buffer.load(Int32.self, at: base + 22))
    }
    guard pts.isValid, dts?.isValid ?? true else { throw .invalidTimestamp(offset: recordOffset) }
    let payloadSize = length - DumpFormat.sampleHeaderSize
    guard payloadSize > 0 else {
      throw .malformedRecord(offset: recordOffset, recordType: type, reason: "empty sample payload")
    }
    guard let format = formats[Int(kind.rawValue)] else {
      throw .missingFormat(offset: recordOffset, kind: kind)
    }
    var nalUnits: AVCCSummary?
    if let video = format.video {
      let payload = buffer.span(head + Self.payloadStart..<head + Self.payloadStart + payloadSize)
      let walked = Result { () throws(FormatError) in try video.summarize(payload) }
      switch walked {
      case .success(let summary): nalUnits = summary
      case .failure(let error): throw .format(offset: recordOffset, error)
      }
    }
    let header = DumpSampleHeader(
      kind: kind, pts: pts, dts: dts, isKeyframe: flags & DumpFormat.keyframeFlag != 0,
      payloadSize: payloadSize, nalUnits: nalUnits)
    refusedSampleKind = nil
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
    let base = head + DumpFormat.recordHeaderSize
    guard let kind = SampleKind(rawValue: buffer[base]) else {
      throw .unknownKind(offset: recordOffset, kind: buffer[base])
    }
    guard let code = DumpEvent.Code(rawValue: buffer[base + 1]) else {
      throw .unknownEvent(offset: recordOffset, code: buffer[base + 1])
    }
    let time = MediaTime(
      value: buffer.load(Int64.self, at: base + 2),
      timescale: buffer.load(Int32.self, at: base + 10))
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

  /// Makes `count` bytes from `head` on available in `buffer`, reading blocks from the source.
  /// Returns how many are available (less only at the end of input).
  ///
  /// What is left of the last block moves to the front first; the buffer grows, by `readChunk`,
  /// only once it is full of bytes that arrived. Every read asks for all the free space.
  private mutating func fill(_ count: Int) throws(DumpError) -> Int {
    if tail - head >= count { return count }
    // A copy of the reader shares the buffer until one of them reads on.
    if !isKnownUniquelyReferenced(&buffer) { buffer = buffer.copy(keeping: tail) }
    if head > 0 {
      let kept = tail - head
      buffer.moveToFront(from: head, count: kept)
      offsetOfBuffer += Int64(head)
      head = 0
      tail = kept
    }
    while tail < count {
      // Exactly one block more, left uninitialised: only bytes that arrived are ever read.
      if buffer.capacity == tail { buffer.grow(to: tail + Self.readChunk, keeping: tail) }
      let from = tail
      let want = buffer.capacity - from
      let got: Int
      do { got = try source.read(into: buffer.free(from: from)) } catch {
        throw .io(offset: offsetOfBuffer + Int64(from), description: "\(error)")
      }
      guard got > 0 else { break }
      guard got <= want else {
        throw .io(
          offset: offsetOfBuffer + Int64(from),
          description: "source returned \(got) bytes for a \(want)-byte buffer")
      }
      tail += got
    }
    return min(count, tail)
  }
}
