/// The capture-side half of the TS writer: turns one access unit into whole 188-byte transport
/// packets in a buffer the caller provides (a reserved slot of the send ring).
///
/// Continuity counters are left 0 and the PCR slot empty: the send side (`TSOutputStream`)
/// decides them when packets leave the ring, after any drops.
///
/// Every unit starts with payload_unit_start_indicator set and an adaptation field:
/// 8 bytes on the PCR PID (flags and a 6-byte slot for a PCR, stuffed with 0xFF and PCR_flag 0),
/// 2 bytes elsewhere (flags). random_access_indicator marks video keyframes (H.264 IDR, HEVC
/// IRAP) and every audio frame. The last packet is padded with adaptation-field stuffing.
///
/// The packetizer keeps no scratch: `layout` measures the unit (from the sample's `AVCCSummary`,
/// without walking its NAL units again), the caller reserves exactly `Layout.byteCount` bytes in
/// the ring, and `write` lays out the packets there and copies the elementary stream straight
/// into their payloads. Nothing is allocated per unit.
public struct TSPacketizer: Sendable {
  /// The tracks being packetized, with the formats in force.
  public private(set) var program: TSProgram
  /// The video format's NAL length size and parameter-set bytes, kept apart so that measuring a
  /// unit copies no format (its arrays would be reference counted per unit).
  private var videoLengthSize: Int?
  private var videoParameterSetsSize: Int
  /// For HEVC video, the stream's highest TemporalId (what makes a picture disposable); nil for
  /// H.264.
  private var hevcHighestTemporalID: Int?
  /// `program.pcrKind` (which tracks are present never changes).
  private let pcrKind: SampleKind?

  public init(program: TSProgram) {
    self.program = program
    pcrKind = program.pcrKind
    (videoLengthSize, videoParameterSetsSize, hevcHighestTemporalID) = Self.videoFigures(
      program.video)
  }

  /// What the packetizer keeps of a video format: NAL length size, the Annex B size of its
  /// parameter sets, and for HEVC the highest TemporalId.
  private static func videoFigures(_ video: VideoFormat?) -> (Int?, Int, Int?) {
    switch video {
    case .h264(let format)?: (format.nalLengthSize, AnnexB.parameterSetsSize(format), nil)
    case .hevc(let format)?:
      (format.nalLengthSize, HEVCAnnexB.parameterSetsSize(format), format.highestTemporalID)
    case nil: (nil, 0, nil)
    }
  }

  /// Takes a new format for a track of the program, so the next IDR carries the new SPS/PPS and
  /// the next audio frame the new ADTS fields. A kind absent from the program stays absent: the
  /// PMT cannot grow mid-stream.
  public mutating func update(_ format: FormatDescription, for kind: SampleKind) {
    guard program.contains(kind) else { return }
    program.set(format, for: kind)
    (videoLengthSize, videoParameterSetsSize, hevcHighestTemporalID) = Self.videoFigures(
      program.video)
  }

  /// A measured unit: what `write` will emit, and how many bytes it needs.
  public struct Layout: Sendable {
    /// Bytes `write` fills: whole transport packets.
    public let byteCount: Int
    let kind: SampleKind
    let header: PESHeader
    let elementary: Elementary
    let fieldSize: Int
    let flags: UInt8
    let payloadSize: Int

    /// Plain values only: a copy of the format's parameter-set arrays would cost reference
    /// counting per unit; `write` takes the format from the program.
    enum Elementary {
      case h264(AnnexB.AccessUnitInfo, lengthSize: Int)
      case hevc(AnnexB.AccessUnitInfo, lengthSize: Int, temporalID: Int)
      case audio(ADTSHeader)

      var size: Int {
        switch self {
        case .h264(let info, _), .hevc(let info, _, _): info.size
        case .audio(let adts): adts.frameLength
        }
      }
    }
  }

  /// Measures one access unit.
  ///
  /// - Parameters:
  ///   - kind: the track; a kind absent from the program gives nil.
  ///   - pts: presentation time in 90 kHz ticks, written modulo 2^33.
  ///   - dts: decode time in 90 kHz ticks; written for video only when it differs from `pts`.
  ///   - isKeyframe: IDR (HEVC: IRAP) for video; parameter sets and random_access_indicator
  ///     follow it.
  ///   - payload: length-prefixed NAL units for video, one raw AAC frame for audio.
  ///   - nalUnits: the video payload's summary, if it was already walked (by the walk of the
  ///     program's codec); without one (or with one of another payload size) the payload is
  ///     walked here.
  /// - Throws: `FormatError.nalLengthPastEnd` for a malformed video sample,
  ///   `FormatError.aacFrameTooLarge` for an audio frame ADTS cannot describe.
  /// - Complexity: O(1) for audio and for video with a summary.
  public func layout(
    kind: SampleKind, pts: Int64, dts: Int64, isKeyframe: Bool, payload: UnsafeRawBufferPointer,
    nalUnits: AVCCSummary? = nil
  ) throws(FormatError) -> Layout? {
    let fieldSize =
      kind == pcrKind ? TSPacket.pcrAdaptationFieldSize : TSPacket.flagsAdaptationFieldSize
    let header: PESHeader
    let elementary: Layout.Elementary
    let flags: UInt8
    switch kind {
    case .video:
      guard let lengthSize = videoLengthSize else { return nil }
      let summary: AVCCSummary
      if let nalUnits, nalUnits.describes(payload, lengthSize: lengthSize) {
        summary = nalUnits
      } else if let highest = hevcHighestTemporalID {
        summary = try AVCCScanner.summarizeHEVC(
          payload, lengthSize: lengthSize, highestTemporalID: highest)
      } else {
        summary = try AVCCScanner.summarize(payload, lengthSize: lengthSize)
      }
      header = PESHeader(streamID: PESHeader.videoStreamID, pts: pts, dts: dts)
      if hevcHighestTemporalID != nil {
        let info = HEVCAnnexB.inspect(
          summary: summary, parameterSetsSize: videoParameterSetsSize, isKeyframe: isKeyframe)
        elementary = .hevc(info, lengthSize: lengthSize, temporalID: summary.temporalID)
      } else {
        let info = AnnexB.inspect(
          summary: summary, parameterSetsSize: videoParameterSetsSize, isKeyframe: isKeyframe)
        elementary = .h264(info, lengthSize: lengthSize)
      }
      flags = isKeyframe ? TSPacket.randomAccessFlag : 0
    case .audioApp, .audioMic:
      guard let format = kind == .audioApp ? program.audioApp : program.audioMic else {
        return nil
      }
      header = PESHeader(streamID: PESHeader.audioStreamID, pts: pts)
      elementary = .audio(try ADTSHeader(format: format, payloadSize: payload.count))
      flags = TSPacket.randomAccessFlag
    }
    let packets = PESPacketWriter.packetCount(
      pesSize: header.size + elementary.size, firstFieldSize: fieldSize)
    return Layout(
      byteCount: packets * TSPacket.size, kind: kind, header: header, elementary: elementary,
      fieldSize: fieldSize, flags: flags, payloadSize: payload.count)
  }

  /// Writes a measured unit into `out` (a reserved ring slot).
  ///
  /// - Parameters:
  ///   - layout: from `layout(...)` for this `payload`.
  ///   - out: at least `layout.byteCount` bytes.
  /// - Returns: the packets written, `layout.byteCount` bytes.
  /// - Throws: `FormatError.nalLengthPastEnd` when `payload` is not the sample that was measured;
  ///   `out` then holds nothing meaningful (the caller aborts the slot).
  public func write(
    _ layout: Layout, payload: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer
  )
    throws(FormatError) -> PacketizedUnit
  {
    guard payload.count == layout.payloadSize else {
      throw .nalLengthPastEnd(offset: 0, length: layout.payloadSize)
    }
    let elementarySize = layout.elementary.size
    var writer = PESPacketWriter(
      out: out, pid: TSPacket.pid(for: layout.kind), pesSize: layout.header.size + elementarySize,
      firstFieldSize: layout.fieldSize, firstFlags: layout.flags)
    layout.header.write(to: out, at: writer.position, payloadSize: elementarySize)
    writer.skip(layout.header.size)
    switch layout.elementary {
    case .h264(let info, let lengthSize):
      // The format (and its parameter-set arrays) is touched only for a unit that carries them.
      let written = AnnexB.write(
        avcc: payload, lengthSize: lengthSize,
        parameterSets: info.insertsParameterSets ? program.video?.h264 : nil, info: info,
        into: &writer)
      guard written else { throw .nalLengthPastEnd(offset: 0, length: payload.count) }
    case .hevc(let info, let lengthSize, let temporalID):
      let written = HEVCAnnexB.write(
        sample: payload, lengthSize: lengthSize,
        parameterSets: info.insertsParameterSets ? program.video?.hevc : nil, info: info,
        temporalID: temporalID, into: &writer)
      guard written else { throw .nalLengthPastEnd(offset: 0, length: payload.count) }
    case .audio(let adts):
      adts.write(into: &writer)
      writer.write(payload)
    }
    assert(writer.isComplete)
    return PacketizedUnit(byteCount: writer.byteCount, packetCount: writer.packetCount)
  }

  /// Packetizes one access unit into `out`: `layout` then `write`.
  ///
  /// - Parameters: as for `layout(...)`; `out` holds at least
  ///   `maximumPacketizedSize(payloadSize:kind:)` bytes. A kind absent from the program writes
  ///   nothing and returns `PacketizedUnit.empty`.
  /// - Throws: as `layout(...)`. Nothing meaningful is left in `out` then.
  public func packetize(
    kind: SampleKind, pts: Int64, dts: Int64, isKeyframe: Bool, payload: UnsafeRawBufferPointer,
    nalUnits: AVCCSummary? = nil, into out: UnsafeMutableRawBufferPointer
  ) throws(FormatError) -> PacketizedUnit {
    guard
      let layout = try layout(
        kind: kind, pts: pts, dts: dts, isKeyframe: isKeyframe, payload: payload,
        nalUnits: nalUnits)
    else { return .empty }
    return try write(layout, payload: payload, into: out)
  }

  /// An upper bound of the bytes `packetize` writes for a `payloadSize`-byte sample of
  /// `format`, so the caller can reserve ring space before packetizing.
  ///
  /// The bound assumes the larger (PCR) adaptation field whatever the kind, and the worst Annex B
  /// growth for video. An audio frame too large for ADTS gives the bound of the largest one
  /// (packetizing it throws).
  public static func maximumPacketizedSize(
    payloadSize: Int, kind: SampleKind, format: FormatDescription
  ) -> Int {
    let elementarySize: Int
    switch format {
    case .h264(let h264):
      elementarySize = AnnexB.maximumSize(payloadSize: payloadSize, format: h264)
    case .hevc(let hevc):
      elementarySize = HEVCAnnexB.maximumSize(payloadSize: payloadSize, format: hevc)
    case .aac:
      elementarySize = ADTSHeader.size + min(max(0, payloadSize), ADTSHeader.maximumPayloadSize)
    }
    let packets = PESPacketWriter.packetCount(
      pesSize: PESHeader.maximumSize + elementarySize,
      firstFieldSize: TSPacket.pcrAdaptationFieldSize)
    return packets * TSPacket.size
  }

  /// `maximumPacketizedSize(payloadSize:kind:format:)` with this program's format; 0 for a
  /// kind absent from the program.
  public func maximumPacketizedSize(payloadSize: Int, kind: SampleKind) -> Int {
    guard let format = program.format(for: kind) else { return 0 }
    return Self.maximumPacketizedSize(payloadSize: payloadSize, kind: kind, format: format)
  }
}
