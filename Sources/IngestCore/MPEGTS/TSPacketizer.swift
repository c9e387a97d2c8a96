/// The capture-side half of the TS writer: turns one access unit into whole 188-byte transport
/// packets in a buffer the caller provides (a reserved slot of the send ring).
///
/// Continuity counters are left 0 and the PCR slot empty: the send side (`TSOutputStream`)
/// decides them when packets leave the ring, after any drops.
///
/// Every unit starts with payload_unit_start_indicator set and an adaptation field:
/// 8 bytes on the PCR PID (flags and a 6-byte slot for a PCR, stuffed with 0xFF and PCR_flag 0),
/// 2 bytes elsewhere (flags). random_access_indicator marks video keyframes and every audio
/// frame. The last packet is padded with adaptation-field stuffing.
///
/// The packetizer keeps no scratch: it measures the unit first, lays out the packets, then
/// writes the elementary stream straight into their payloads. Nothing is allocated per unit.
public struct TSPacketizer: Sendable {
  /// The tracks being packetized.
  public let program: TSProgram
  /// Scratch memory the packetizer holds besides its program (for the memory ledger): none.
  public static let scratchByteCount = 0

  public init(program: TSProgram) {
    self.program = program
  }

  /// Packetizes one access unit into `out`.
  ///
  /// - Parameters:
  ///   - kind: the track; a kind absent from the program writes nothing and returns
  ///     `PacketizedUnit.empty`.
  ///   - pts: presentation time in 90 kHz ticks, written modulo 2^33.
  ///   - dts: decode time in 90 kHz ticks; written for video only when it differs from `pts`.
  ///   - isKeyframe: IDR for video (parameter sets and random_access_indicator follow it).
  ///   - payload: AVCC for video, one raw AAC frame for audio.
  ///   - out: at least `maximumPacketizedSize(payloadSize:kind:)` bytes.
  /// - Throws: `FormatError.nalLengthPastEnd` for a malformed AVCC sample,
  ///   `FormatError.aacFrameTooLarge` for an audio frame ADTS cannot describe. Nothing
  ///   meaningful is left in `out` then.
  public mutating func packetize(
    kind: SampleKind, pts: Int64, dts: Int64, isKeyframe: Bool, payload: UnsafeRawBufferPointer,
    into out: UnsafeMutableRawBufferPointer
  ) throws(FormatError) -> PacketizedUnit {
    let pid = TSPacket.pid(for: kind)
    let fieldSize =
      kind == program.pcrKind ? TSPacket.pcrAdaptationFieldSize : TSPacket.flagsAdaptationFieldSize
    switch kind {
    case .video:
      guard let format = program.video else { return .empty }
      let info = try AnnexB.inspect(avcc: payload, format: format, isKeyframe: isKeyframe)
      let header = PESHeader(streamID: PESHeader.videoStreamID, pts: pts, dts: dts)
      var writer = PESPacketWriter(
        out: out, pid: pid, pesSize: header.size + info.size, firstFieldSize: fieldSize,
        firstFlags: isKeyframe ? TSPacket.randomAccessFlag : 0)
      header.write(to: out, at: writer.position, payloadSize: info.size)
      writer.skip(header.size)
      AnnexB.write(avcc: payload, format: format, info: info, into: &writer)
      assert(writer.isComplete)
      return PacketizedUnit(
        byteCount: writer.byteCount, packetCount: writer.packetCount,
        isDisposable: info.isDisposable)
    case .audioApp, .audioMic:
      guard let format = kind == .audioApp ? program.audioApp : program.audioMic else {
        return .empty
      }
      let adts = try ADTSHeader(format: format, payloadSize: payload.count)
      let header = PESHeader(streamID: PESHeader.audioStreamID, pts: pts)
      var writer = PESPacketWriter(
        out: out, pid: pid, pesSize: header.size + adts.frameLength, firstFieldSize: fieldSize,
        firstFlags: TSPacket.randomAccessFlag)
      header.write(to: out, at: writer.position, payloadSize: adts.frameLength)
      writer.skip(header.size)
      adts.write(into: &writer)
      writer.write(payload)
      assert(writer.isComplete)
      return PacketizedUnit(
        byteCount: writer.byteCount, packetCount: writer.packetCount, isDisposable: false)
    }
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
