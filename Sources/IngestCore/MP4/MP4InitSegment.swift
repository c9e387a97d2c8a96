/// The head of a fragmented MP4 (ISO/IEC 14496-12): `ftyp` and a `moov` that describes the
/// tracks but holds no samples; the samples follow in `moof` + `mdat` fragments
/// (`MP4Fragmenter`). It is also an HLS initialization section (`EXT-X-MAP`).
///
/// ```
/// ftyp                 brands (isom/iso6/mp41, or qt for .mov; a recording adds bcin)
/// moov
/// ├─ mvhd              timescale 1000, duration 0 (the fragments carry the time)
/// ├─ trak              one per sample stream: video, app audio, mic audio
/// │  ├─ tkhd           track_ID, enabled, picture size (video) or volume (audio)
/// │  └─ mdia
/// │     ├─ mdhd        timescale: 90000 video, the sample rate audio
/// │     ├─ hdlr        vide | soun, and which stream ("App audio", "Microphone")
/// │     └─ minf
/// │        ├─ vmhd | smhd
/// │        ├─ dinf/dref  one self-contained "url " entry
/// │        └─ stbl       stsd + empty stts, stsc, stsz, stco
/// │           └─ stsd    avc1 + avcC | hvc1 + hvcC (+ colr where the SPS states colour)
/// │                      | mp4a + esds (AudioSpecificConfig)
/// └─ mvex
///    └─ trex           one per track: sample description 1, no defaults
/// ```
public enum MP4InitSegment {
  /// The brands of `ftyp`.
  public enum Brand: Sendable, Equatable {
    /// ISO base media (`.mp4`, `.m4s` initialization sections).
    case iso
    /// QuickTime (`.mov`): the same boxes under the `qt  ` brand.
    case quickTime
  }

  /// The compatible brand `ftyp` lists in a recording (`MP4FileSink`): what `ingest recover`
  /// takes as proof that ingest wrote the file, so it never cuts a file another program made.
  /// Readers ignore a compatible brand they do not know (ISO/IEC 14496-12, 4.3).
  public static let recordingBrand: StaticString = "bcin"

  /// `ftyp` + `moov` for `tracks`.
  /// - Parameters:
  ///   - tracks: the tracks, in the order their fragments list them.
  ///   - brand: ISO or QuickTime brands.
  ///   - marksRecording: lists `recordingBrand` among the compatible brands (a `.mp4`/`.mov`
  ///     recording; HLS initialization sections are never recovered and go without it).
  public static func bytes(tracks: [MP4Track], brand: Brand = .iso, marksRecording: Bool = false)
    -> [UInt8]
  {
    var w = MP4ByteWriter(capacity: 1024)
    writeFileType(&w, brand: brand, marksRecording: marksRecording)
    let moov = w.begin("moov")
    writeMovieHeader(&w, nextTrackID: UInt32(tracks.count + 1))
    for track in tracks { writeTrack(&w, track, brand: brand) }
    let mvex = w.begin("mvex")
    for track in tracks {
      let trex = w.begin("trex", version: 0, flags: 0)
      w.u32(track.id)
      w.u32(1)  // default_sample_description_index
      w.u32(0)  // default_sample_duration
      w.u32(0)  // default_sample_size
      w.u32(0)  // default_sample_flags: every fragment's trun states its own
      w.end(trex)
    }
    w.end(mvex)
    w.end(moov)
    return w.bytes
  }

  static func writeFileType(_ w: inout MP4ByteWriter, brand: Brand, marksRecording: Bool) {
    let ftyp = w.begin("ftyp")
    switch brand {
    case .iso:
      // iso6: fragments with tfdt (14496-12 amendments); mp41 so older readers accept it.
      w.fourCC("iso6")
      w.u32(0)
      w.fourCC("iso6")
      w.fourCC("isom")
      w.fourCC("mp41")
    case .quickTime:
      w.fourCC("qt  ")
      w.u32(0x200)
      w.fourCC("qt  ")
    }
    if marksRecording { w.fourCC(recordingBrand) }
    w.end(ftyp)
  }

  static func writeMovieHeader(_ w: inout MP4ByteWriter, nextTrackID: UInt32) {
    let mvhd = w.begin("mvhd", version: 0, flags: 0)
    w.u32(0)  // creation_time
    w.u32(0)  // modification_time
    w.u32(1000)  // timescale
    w.u32(0)  // duration: unknown while fragments are written
    w.u32(0x0001_0000)  // rate 1.0
    w.u16(0x0100)  // volume 1.0
    w.zeros(10)
    w.unityMatrix()
    w.zeros(24)  // pre_defined
    w.u32(nextTrackID)
    w.end(mvhd)
  }

  static func writeTrack(_ w: inout MP4ByteWriter, _ track: MP4Track, brand: Brand) {
    let isVideo = track.kind == .video
    let size = track.pictureSize
    let trak = w.begin("trak")
    // flags: track_enabled | track_in_movie | track_in_preview. Both audio tracks are enabled
    // and in no alternate group, so a player mixes them as the broadcast did.
    let tkhd = w.begin("tkhd", version: 0, flags: 7)
    w.u32(0)  // creation_time
    w.u32(0)  // modification_time
    w.u32(track.id)
    w.u32(0)  // reserved
    w.u32(0)  // duration
    w.zeros(8)
    w.u16(0)  // layer
    w.u16(0)  // alternate_group
    w.u16(isVideo ? 0 : 0x0100)  // volume
    w.u16(0)
    w.unityMatrix()
    w.u32(UInt32(truncatingIfNeeded: size.width) << 16)
    w.u32(UInt32(truncatingIfNeeded: size.height) << 16)
    w.end(tkhd)

    let mdia = w.begin("mdia")
    let mdhd = w.begin("mdhd", version: 0, flags: 0)
    w.u32(0)  // creation_time
    w.u32(0)  // modification_time
    w.u32(track.timescale)
    w.u32(0)  // duration
    w.u16(0x55C4)  // language "und", packed ISO 639-2/T
    w.u16(0)
    w.end(mdhd)
    let hdlr = w.begin("hdlr", version: 0, flags: 0)
    w.u32(0)  // pre_defined
    if isVideo { w.fourCC("vide") } else { w.fourCC("soun") }
    w.zeros(12)
    w.append(track.handlerName.utf8)
    w.u8(0)
    w.end(hdlr)

    let minf = w.begin("minf")
    if isVideo {
      let vmhd = w.begin("vmhd", version: 0, flags: 1)
      w.zeros(8)  // graphicsmode, opcolor
      w.end(vmhd)
    } else {
      let smhd = w.begin("smhd", version: 0, flags: 0)
      w.zeros(4)  // balance, reserved
      w.end(smhd)
    }
    let dinf = w.begin("dinf")
    let dref = w.begin("dref", version: 0, flags: 0)
    w.u32(1)
    let url = w.begin("url ", version: 0, flags: 1)  // flag 1: the media is in this file
    w.end(url)
    w.end(dref)
    w.end(dinf)

    let stbl = w.begin("stbl")
    let stsd = w.begin("stsd", version: 0, flags: 0)
    w.u32(1)
    writeSampleEntry(&w, track, size: size, brand: brand)
    w.end(stsd)
    // The sample tables are empty: every sample is in a fragment.
    for type: StaticString in ["stts", "stsc", "stco"] {
      let box = w.begin(type, version: 0, flags: 0)
      w.u32(0)
      w.end(box)
    }
    let stsz = w.begin("stsz", version: 0, flags: 0)
    w.u32(0)  // sample_size
    w.u32(0)  // sample_count
    w.end(stsz)
    w.end(stbl)
    w.end(minf)
    w.end(mdia)
    w.end(trak)
  }

  static func writeSampleEntry(
    _ w: inout MP4ByteWriter, _ track: MP4Track, size: (width: Int, height: Int), brand: Brand
  ) {
    switch track.format {
    case .h264(let h264):
      let entry = w.begin("avc1")
      writeVisualSampleEntryFields(&w, size: size)
      let avcC = w.begin("avcC")
      w.append(h264.avcC)
      w.end(avcC)
      if let colour = h264.sps.first.flatMap(VideoColour.init(h264SPS:)) {
        writeColour(&w, colour, brand: brand)
      }
      w.end(entry)
    case .hevc(let hevc):
      // hvc1, not hev1: Apple's players decode only hvc1, whose parameter sets are in hvcC.
      let entry = w.begin("hvc1")
      writeVisualSampleEntryFields(&w, size: size)
      let hvcC = w.begin("hvcC")
      w.append(hevc.hvcC)
      w.end(hvcC)
      if let colour = hevc.sequence.colour { writeColour(&w, colour, brand: brand) }
      w.end(entry)
    case .aac(let aac):
      let entry = w.begin("mp4a")
      w.zeros(6)
      w.u16(1)  // data_reference_index
      w.zeros(8)  // version, revision, vendor
      w.u16(UInt16(aac.channels == 7 ? 8 : aac.channels))  // channel configuration 7 is 7.1
      w.u16(16)  // samplesize
      w.u16(0)  // pre_defined
      w.u16(0)
      // 16.16 fixed point; rates above 65535 do not fit, and readers take the rate from esds.
      w.u32(aac.sampleRate <= 0xFFFF ? UInt32(aac.sampleRate) << 16 : 0)
      writeElementaryStreamDescriptor(&w, aac)
      w.end(entry)
    }
  }

  /// `colr` (14496-12, 12.1.5): the SPS's colour code points beside the stream, where players
  /// look for them (AVFoundation tags the track from it rather than from the SPS). ISO files
  /// take `nclx`, which carries the range; QuickTime movies `nclc`, which has no range field.
  static func writeColour(_ w: inout MP4ByteWriter, _ colour: VideoColour, brand: Brand) {
    let colr = w.begin("colr")
    w.fourCC(brand == .quickTime ? "nclc" : "nclx")
    w.u16(UInt16(colour.primaries))
    w.u16(UInt16(colour.transfer))
    w.u16(UInt16(colour.matrix))
    if brand != .quickTime { w.u8(colour.isFullRange ? 0x80 : 0) }
    w.end(colr)
  }

  /// The fields every VisualSampleEntry has before its configuration box (14496-12, 12.1.3).
  static func writeVisualSampleEntryFields(
    _ w: inout MP4ByteWriter, size: (width: Int, height: Int)
  ) {
    w.zeros(6)
    w.u16(1)  // data_reference_index
    w.zeros(16)  // pre_defined, reserved, pre_defined[3]
    w.u16(UInt16(clamping: size.width))
    w.u16(UInt16(clamping: size.height))
    w.u32(0x0048_0000)  // 72 dpi
    w.u32(0x0048_0000)
    w.u32(0)
    w.u16(1)  // frame_count
    w.zeros(32)  // compressorname: empty Pascal string
    w.u16(0x0018)  // depth
    w.u16(0xFFFF)  // pre_defined -1
  }

  /// `esds` (14496-14, 5.6): an ES_Descriptor whose DecoderConfigDescriptor names AAC
  /// (objectTypeIndication 0x40, audio stream) and carries the AudioSpecificConfig.
  ///
  /// ```
  /// 03 len  ES_ID(2) flags(1)
  ///   04 len  0x40 0x15 bufferSizeDB(3) maxBitrate(4) avgBitrate(4)
  ///     05 len  AudioSpecificConfig
  ///   06 01 02  SLConfigDescriptor, predefined MP4
  /// ```
  /// Every length fits one byte: the AudioSpecificConfig is two bytes.
  static func writeElementaryStreamDescriptor(_ w: inout MP4ByteWriter, _ aac: AACFormat) {
    let config = aac.audioSpecificConfig
    let decoderSpecific = 2 + config.count
    let decoderConfig = 2 + 13 + decoderSpecific
    let esLength = 3 + decoderConfig + 3
    let esds = w.begin("esds", version: 0, flags: 0)
    w.u8(0x03)
    w.u8(UInt8(esLength))
    w.u16(0)  // ES_ID
    w.u8(0)  // no dependency, URL or OCR stream
    w.u8(0x04)
    w.u8(UInt8(decoderConfig - 2))
    w.u8(0x40)  // Audio ISO/IEC 14496-3
    w.u8(0x15)  // streamType audio (5) << 2 | upStream 0 | reserved 1
    w.u24(0)  // bufferSizeDB
    w.u32(0)  // maxBitrate
    w.u32(0)  // avgBitrate
    w.u8(0x05)
    w.u8(UInt8(config.count))
    w.append(config)
    w.u8(0x06)
    w.u8(1)
    w.u8(0x02)
    w.end(esds)
  }
}
