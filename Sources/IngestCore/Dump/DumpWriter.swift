/// Writes a captured-sample dump (`docs/dump-format.md`) to a byte sink.
///
/// The writer checks what it writes as strictly as `DumpReader` checks what it reads: a sample needs
/// a format record for its kind first, timescales must be positive, and video NAL lengths must fill
/// the sample exactly. A rejected record is not written, so the dump stays readable.
/// Sample records are written without copying the payload and without heap allocation.
public struct DumpWriter<Sink: ByteSink> {
  /// The destination; exposed so the owner can flush or close it.
  public private(set) var sink: Sink
  /// Bytes written so far (the offset of the next record).
  public private(set) var offset: Int64 = 0
  /// The last format written per kind, indexed by `SampleKind.rawValue`.
  private var formats: [FormatDescription?] = [nil, nil, nil]

  /// Creates a writer and writes the file header.
  public init(sink: Sink) throws(DumpError) {
    self.sink = sink
    var header = DumpFormat.magic
    header.append(UInt8(DumpFormat.version & 0xFF))
    header.append(UInt8(DumpFormat.version >> 8))
    header.append(contentsOf: [0, 0])
    // Array's closures rethrow untyped errors; Result keeps the typed one.
    try header.withUnsafeBytes { raw in Result { () throws(DumpError) in try put(raw) } }.get()
  }

  /// Writes the codec configuration for `kind`; samples of that kind may follow.
  ///
  /// H.264 is stored as its avcC record, HEVC as its hvcC, AAC as its AudioSpecificConfig.
  public mutating func writeFormat(_ format: FormatDescription, for kind: SampleKind)
    throws(DumpError)
  {
    let codec: DumpFormat.Codec
    let config: [UInt8]
    switch format {
    case .h264(let h264):
      codec = .h264
      config = h264.avcC
    case .hevc(let hevc):
      codec = .hevc
      config = hevc.hvcC
    case .aac(let aac):
      codec = .aac
      config = aac.audioSpecificConfig
    }
    guard codec.isVideo == (kind == .video) else {
      throw .malformedRecord(
        offset: offset, recordType: DumpFormat.RecordType.format.rawValue,
        reason: "codec does not fit the sample kind")
    }
    var payload: [UInt8] = [kind.rawValue, codec.rawValue]
    payload.append(contentsOf: config)
    try payload.withUnsafeBytes { raw in
      Result { () throws(DumpError) in
        try writeRecord(type: DumpFormat.RecordType.format.rawValue, fixed: raw, payload: nil)
      }
    }.get()
    formats[Int(kind.rawValue)] = format
  }

  /// Writes a sample record from a `MediaSample`.
  public mutating func writeSample(_ sample: MediaSample) throws(DumpError) {
    try sample.payload.withUnsafeBytes { raw in
      Result { () throws(DumpError) in
        try writeSample(
          kind: sample.kind, pts: sample.pts, dts: sample.dts, isKeyframe: sample.isKeyframe,
          payload: raw)
      }
    }.get()
  }

  /// Writes a sample record whose encoded bytes are in `payload` (AVCC for video, a raw AAC frame
  /// for audio).
  public mutating func writeSample(
    kind: SampleKind, pts: MediaTime, dts: MediaTime?, isKeyframe: Bool,
    payload: UnsafeRawBufferPointer
  ) throws(DumpError) {
    let type = DumpFormat.RecordType.sample.rawValue
    guard pts.isValid, dts?.isValid ?? true else { throw .invalidTimestamp(offset: offset) }
    guard !payload.isEmpty else {
      throw .malformedRecord(offset: offset, recordType: type, reason: "empty sample payload")
    }
    let size = DumpFormat.sampleHeaderSize + payload.count
    guard size <= DumpFormat.maximumPayloadSize else {
      throw .recordTooLarge(offset: offset, size: size)
    }
    guard let format = formats[Int(kind.rawValue)] else {
      throw .missingFormat(offset: offset, kind: kind)
    }
    if let video = format.video,
      let error = DumpFormat.validateNALUnits(payload, lengthSize: video.nalLengthSize)
    {
      throw .format(offset: offset, error)
    }
    var flags: UInt8 = isKeyframe ? DumpFormat.keyframeFlag : 0
    if dts != nil { flags |= DumpFormat.hasDTSFlag }
    let dtsTime = dts ?? MediaTime(value: 0, timescale: 0)
    try withUnsafeTemporaryAllocation(byteCount: DumpFormat.sampleHeaderSize, alignment: 8) {
      (fixed) throws(DumpError) in
      fixed[0] = kind.rawValue
      fixed[1] = flags
      fixed.storeBytes(of: pts.value.littleEndian, toByteOffset: 2, as: Int64.self)
      fixed.storeBytes(of: pts.timescale.littleEndian, toByteOffset: 10, as: Int32.self)
      fixed.storeBytes(of: dtsTime.value.littleEndian, toByteOffset: 14, as: Int64.self)
      fixed.storeBytes(of: dtsTime.timescale.littleEndian, toByteOffset: 22, as: Int32.self)
      try writeRecord(type: type, fixed: UnsafeRawBufferPointer(fixed), payload: payload)
    }
  }

  /// Writes an event record.
  public mutating func writeEvent(_ event: DumpEvent) throws(DumpError) {
    let type = DumpFormat.RecordType.event.rawValue
    guard event.time.isValid else { throw .invalidTimestamp(offset: offset) }
    guard event.kind.isAudio else {
      throw .malformedRecord(
        offset: offset, recordType: type, reason: "audio interruption on the video track")
    }
    try withUnsafeTemporaryAllocation(byteCount: DumpFormat.eventSize, alignment: 8) {
      (fixed) throws(DumpError) in
      fixed[0] = event.kind.rawValue
      fixed[1] = event.code.rawValue
      fixed.storeBytes(of: event.time.value.littleEndian, toByteOffset: 2, as: Int64.self)
      fixed.storeBytes(of: event.time.timescale.littleEndian, toByteOffset: 10, as: Int32.self)
      try writeRecord(type: type, fixed: UnsafeRawBufferPointer(fixed), payload: nil)
    }
  }

  /// Writes a record of any type with an opaque payload (for forward-compatibility tests and
  /// tools that copy records they do not interpret).
  public mutating func writeRawRecord(type: UInt8, payload: UnsafeRawBufferPointer)
    throws(DumpError)
  {
    try writeRecord(type: type, fixed: payload, payload: nil)
  }

  /// Writes type, length, `fixed`, `payload` and the CRC over all of them.
  private mutating func writeRecord(
    type: UInt8, fixed: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer?
  ) throws(DumpError) {
    let length = fixed.count + (payload?.count ?? 0)
    guard length <= DumpFormat.maximumPayloadSize else {
      throw .recordTooLarge(offset: offset, size: length)
    }
    try withUnsafeTemporaryAllocation(byteCount: DumpFormat.recordHeaderSize, alignment: 1) {
      (header) throws(DumpError) in
      header[0] = type
      header.storeBytes(of: UInt32(length).littleEndian, toByteOffset: 1, as: UInt32.self)
      var crc = MPEGCRC32.update(0xFFFF_FFFF, UnsafeRawBufferPointer(header))
      crc = MPEGCRC32.update(crc, fixed)
      if let payload { crc = MPEGCRC32.update(crc, payload) }
      try put(UnsafeRawBufferPointer(header))
      try put(fixed)
      if let payload { try put(payload) }
      try withUnsafeBytes(of: crc.littleEndian) { (raw) throws(DumpError) in try put(raw) }
    }
  }

  private mutating func put(_ bytes: UnsafeRawBufferPointer) throws(DumpError) {
    guard !bytes.isEmpty else { return }
    do {
      try sink.write(bytes)
    } catch {
      throw .io(offset: offset, description: "\(error)")
    }
    offset += Int64(bytes.count)
  }

  /// Lends the sink to its owner, for what the writer does not do (flushing a sink that is a
  /// value; one that is an object the owner reaches through `sink`).
  public mutating func withSink<Result, Failure: Error>(
    _ body: (inout Sink) throws(Failure) -> Result
  ) throws(Failure) -> Result {
    try body(&sink)
  }
}

/// A writer is `Sendable` when its sink is: the rest of it is plain values.
extension DumpWriter: Sendable where Sink: Sendable {}
