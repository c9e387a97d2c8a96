import CFFmpegEncoder
import IngestCore

/// libx264 or libx265 through libavcodec, set up for live: zerolatency tuning (no lookahead, no
/// frame threading delay), no B-frames unless asked, a fixed GOP, bitrate capped by a
/// quarter-second VBV.
///
/// Packets come out with 4-byte NAL lengths (`annexb=0` for both encoders) and the parameter sets
/// in the configuration only (avcC or hvcC), which is what a dump sample and VideoToolbox both
/// carry. Frame timestamps are microseconds (the encoder's time base), from the run's start.
///
/// A bitrate change: libavcodec's libx264 wrapper reconfigures x264 in place on the next frame.
/// Its libx265 wrapper (FFmpeg 5.1) reads the bitrate only when it opens the encoder and never
/// calls `x265_encoder_reconfig`, so an HEVC bitrate waits for the next keyframe: there the
/// encoder is drained and opened again at the new rate, and its first picture is the keyframe
/// (an IDR) that was due anyway. A keyframe request brings the change forward.
///
/// A profile change (the one a WebRTC receiver negotiated) reopens libx264 the same way: its
/// SPS changes, so the new configuration goes out before that keyframe.
final class VideoEncoder {
  /// What `encode` hands out, in stream order.
  enum Output {
    /// The configuration changed (a reopened libx265 wrote other parameter sets): a new format
    /// record goes before the next packet.
    case format(FormatDescription)
    /// One encoded frame: payload, pts and dts in microseconds, keyframe (IDR, or an HEVC IRAP).
    case packet(UnsafeRawBufferPointer, pts: Int64, dts: Int64, keyframe: Bool)
  }

  private let options: EncoderOptions
  private let codec: UnsafePointer<AVCodec>
  private var context: UnsafeMutablePointer<AVCodecContext>?
  private var packet: UnsafeMutablePointer<AVPacket>?
  /// The configuration the encoder announced (avcC or hvcC).
  private(set) var format: FormatDescription
  /// The bitrate asked for, bits per second.
  private(set) var bitrate: Int
  /// Nominal frames per encoded frame (2 at half the frame rate), applied to the encoder's target.
  private var frameRateScale = 1.0
  /// The rate the encoder runs at (the target times `frameRateScale`); for HEVC, the one it was
  /// opened with, which differs from `wantedRate` until the next keyframe.
  private var openedRate: Int
  private var wantedRate: Int
  /// The H.264 profile asked for (nil: libx264's own choice, High) and the one the encoder was
  /// opened with, which differs until the next keyframe.
  private(set) var profile: H264Profile?
  private var openedProfile: H264Profile?
  /// Frames given to the encoder since the last keyframe came out, that keyframe included.
  private var framesSinceKeyframe = 0
  private var lastDTS = Int64.min
  /// Whether the last `encode` reopened the encoder: a deferred bitrate took effect on its frame.
  private(set) var reopenedOnLastFrame = false

  /// Whether a bitrate change takes effect on the next frame (libx264) rather than at the next
  /// keyframe (libx265).
  var changesBitrateInPlace: Bool { options.codec == .h264 }

  init(options: EncoderOptions) throws(EncoderError) {
    guard let codec = avcodec_find_encoder_by_name(options.codec.encoderName) else {
      throw .codec(
        options.codec.displayName,
        reason: "libavcodec was built without \(options.codec.encoderName)")
    }
    self.options = options
    self.codec = codec
    bitrate = options.bitrate
    openedRate = options.bitrate
    wantedRate = options.bitrate
    profile = options.profile
    openedProfile = options.profile
    packet = av_packet_alloc()
    guard packet != nil else { throw .codec(options.codec.displayName, reason: "out of memory") }
    (context, format) = try Self.open(
      codec, options: options, bitrate: options.bitrate, profile: options.profile)
  }

  deinit {
    avcodec_free_context(&context)
    av_packet_free(&packet)
  }

  /// Asks for a new bitrate. libx264 takes it from the next frame: its wrapper compares
  /// bit_rate, rc_max_rate and rc_buffer_size with x264's parameters on every frame and calls
  /// x264_encoder_reconfig when they differ (no new SPS, no IDR). libx265 takes it at the next
  /// keyframe (see the type's notes).
  /// - Returns: whether the rate is in force from the next frame.
  @discardableResult
  func setBitrate(_ bps: Int) -> Bool {
    bitrate = bps
    wantedRate = Int(Double(bps) * frameRateScale)
    guard changesBitrateInPlace else { return wantedRate == openedRate }
    openedRate = wantedRate
    Self.apply(bitrate: wantedRate, to: context!)
    return true
  }

  /// Asks for H.264 in `profile` from the next keyframe on, where the encoder is drained and
  /// opened again in it (a new SPS; the first picture is that keyframe).
  /// - Returns: whether the encoder makes that profile already (nothing to wait for).
  @discardableResult
  func setProfile(_ profile: H264Profile) -> Bool {
    self.profile = profile
    return profile == openedProfile
  }

  /// Tells rate control that only `share` (0 < share ≤ 1) of the nominal frames are encoded.
  /// Without lookahead the encoders budget bits per frame at the nominal rate, so dropping
  /// frames would lower the bitrate with them; scaling the target keeps the output at `bitrate`.
  func setFrameShare(_ share: Double) {
    frameRateScale = 1 / share
    setBitrate(bitrate)
  }

  private static func apply(bitrate: Int, to context: UnsafeMutablePointer<AVCodecContext>) {
    context.pointee.bit_rate = Int64(bitrate)
    context.pointee.rc_max_rate = Int64(bitrate)
    // A quarter second of VBV: a new target shows in the output within that, and a live link's
    // queue never has to absorb more than that above the target. An IDR still fits in it.
    context.pointee.rc_buffer_size = Int32(clamping: bitrate / 4)
  }

  /// Encodes `frame` (nil: drains the encoder) at `microseconds`, as an IDR when `idr`; calls
  /// `emit` with what comes out. Returns false as soon as `emit` does.
  func encode(
    _ frame: UnsafeMutablePointer<AVFrame>?, microseconds: Int64, idr: Bool,
    _ emit: (Output) throws(EncoderError) -> Bool
  ) throws(EncoderError) -> Bool {
    reopenedOnLastFrame = false
    var idr = idr
    if frame != nil, wantedRate != openedRate || profile != openedProfile,
      idr || framesSinceKeyframe >= options.keyframeInterval
    {
      guard try reopen(emit) else { return false }
      // A new encoder starts with an IDR; asking for one keeps the request's echo true.
      idr = true
    }
    if let frame {
      frame.pointee.pts = microseconds
      // A decoded frame keeps its source's picture type; only our own requests may force one.
      frame.pointee.pict_type = idr ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE
      framesSinceKeyframe += 1
    }
    let sent = avcodec_send_frame(context, frame)
    guard sent != LibAV.endOfFile else { return true }
    try LibAV.check(sent, "encoding video")
    return try receivePackets(emit)
  }

  private func receivePackets(_ emit: (Output) throws(EncoderError) -> Bool)
    throws(EncoderError) -> Bool
  {
    while true {
      let code = avcodec_receive_packet(context, packet)
      if code == LibAV.again || code == LibAV.endOfFile { return true }
      try LibAV.check(code, "encoding video")
      defer { av_packet_unref(packet) }
      let encoded = packet!.pointee
      let payload = UnsafeRawBufferPointer(start: encoded.data, count: Int(encoded.size))
      let keyframe = encoded.flags & Int32(cffenc_pkt_flag_key()) != 0
      if keyframe { framesSinceKeyframe = 1 }
      // A reopened encoder with B-frames starts its DTS a few frames before its first PTS, which
      // can be before the last DTS of the encoder it replaced: decode order stays increasing.
      let dts = max(encoded.dts, lastDTS == .min ? encoded.dts : lastDTS + 1)
      lastDTS = dts
      guard try emit(.packet(payload, pts: encoded.pts, dts: dts, keyframe: keyframe)) else {
        return false
      }
    }
  }

  /// Drains the encoder, opens it again at `wantedRate` in `profile` and announces a changed
  /// configuration.
  private func reopen(_ emit: (Output) throws(EncoderError) -> Bool) throws(EncoderError) -> Bool {
    try LibAV.check(avcodec_send_frame(context, nil), "draining video")
    guard try receivePackets(emit) else { return false }
    avcodec_free_context(&context)
    let previous = format
    (context, format) = try Self.open(
      codec, options: options, bitrate: wantedRate, profile: profile)
    openedRate = wantedRate
    openedProfile = profile
    framesSinceKeyframe = 0
    reopenedOnLastFrame = true
    if format != previous { return try emit(.format(format)) }
    return true
  }

  private static func open(
    _ codec: UnsafePointer<AVCodec>, options: EncoderOptions, bitrate: Int,
    profile: H264Profile?
  ) throws(EncoderError) -> (UnsafeMutablePointer<AVCodecContext>, FormatDescription) {
    let name = options.codec.encoderName
    guard let context = avcodec_alloc_context3(codec) else {
      throw .codec(options.codec.displayName, reason: "out of memory")
    }
    context.pointee.width = Int32(options.width)
    context.pointee.height = Int32(options.height)
    context.pointee.pix_fmt = AV_PIX_FMT_YUV420P
    context.pointee.time_base = AVRational(num: 1, den: 1_000_000)
    context.pointee.framerate = AVRational(num: Int32(options.fps), den: 1)
    context.pointee.gop_size = Int32(options.keyframeInterval)
    context.pointee.keyint_min = Int32(options.keyframeInterval)
    context.pointee.max_b_frames = Int32(options.bFrames)
    // BT.709 described in the VUI: without a colour matrix GStreamer warns on every stream.
    context.pointee.color_primaries = AVCOL_PRI_BT709
    context.pointee.color_trc = AVCOL_TRC_BT709
    context.pointee.colorspace = AVCOL_SPC_BT709
    context.pointee.flags |= Int32(cffenc_flag_global_header())
    apply(bitrate: bitrate, to: context)
    var settings: OpaquePointer?
    defer { av_dict_free(&settings) }
    av_dict_set(&settings, "preset", options.preset, 0)
    av_dict_set(&settings, "tune", "zerolatency", 0)
    // An I picture asked for through AVFrame.pict_type becomes an IDR, so receivers can join.
    av_dict_set(&settings, "forced-idr", "1", 0)
    // x264's profile names are ours: baseline (constrained: no B-frames, CAVLC), main, high.
    if options.codec == .h264, let profile {
      av_dict_set(&settings, "profile", profile.rawValue, 0)
    }
    // Length-prefixed NAL units; no scene-cut keyframes, so the GOP is what --gop says. x265
    // logs only errors and writes no settings SEI (two kilobytes in every header otherwise).
    // Its GOPs stay open (CRA keyframes; with --bframes, RASL pictures after them), as is
    // x265's default: the pipeline drops RASL pictures whose references it did not send.
    // zerolatency turns x265's lookahead off, which B-frames need: the least that takes them.
    let lookahead = options.bFrames > 0 ? ":rc-lookahead=\(options.bFrames + 1)" : ""
    let parameters =
      options.codec == .h264
      ? ("x264-params", "annexb=0:scenecut=0" + (options.openGOP ? ":open-gop=1" : ""))
      : ("x265-params", "annexb=0:scenecut=0:log-level=error:info=0" + lookahead)
    av_dict_set(&settings, parameters.0, parameters.1, 0)
    var opened: UnsafeMutablePointer<AVCodecContext>? = context
    do {
      try LibAV.check(avcodec_open2(context, codec, &settings), "opening \(name)")
      let units = lengthPrefixedUnits(context)
      let format: FormatDescription =
        options.codec == .h264 ? .h264(try avcFormat(units)) : .hevc(try hvcFormat(units))
      return (context, format)
    } catch {
      avcodec_free_context(&opened)
      throw error
    }
  }

  /// The NAL units of the extradata an encoder wrote with a global header, each with a 4-byte
  /// length (`annexb=0`).
  private static func lengthPrefixedUnits(_ context: UnsafeMutablePointer<AVCodecContext>)
    -> [[UInt8]]
  {
    let bytes = Array(
      UnsafeBufferPointer(
        start: context.pointee.extradata, count: Int(context.pointee.extradata_size)))
    var units: [[UInt8]] = []
    var offset = 0
    while offset + 4 <= bytes.count {
      let length = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
      offset += 4
      guard length > 0, offset + length <= bytes.count else { break }
      units.append(Array(bytes[offset..<offset + length]))
      offset += length
    }
    return units
  }

  /// x264's SPS and PPS as an avcC configuration (its SEI goes into the first packet instead).
  private static func avcFormat(_ units: [[UInt8]]) throws(EncoderError) -> H264Format {
    let sps = units.filter { $0[0] & 0x1F == 7 }
    let pps = units.filter { $0[0] & 0x1F == 8 }
    guard let first = sps.first, first.count >= 4, !pps.isEmpty else {
      throw .codec("libx264", reason: "no SPS/PPS in its global header")
    }
    do {
      return try H264Format(
        profile: first[1], compatibility: first[2], level: first[3], nalLengthSize: 4, sps: sps,
        pps: pps)
    } catch {
      throw .codec("libx264", reason: "\(error)")
    }
  }

  /// x265's VPS, SPS and PPS as an hvcC configuration (`HEVCFormat` takes its general fields
  /// from the SPS, as for a captured Annex B stream).
  private static func hvcFormat(_ units: [[UInt8]]) throws(EncoderError) -> HEVCFormat {
    func sets(_ type: HEVCNALUnitType) -> [[UInt8]] {
      units.filter { HEVCNALUnitType(headerByte: $0[0]) == type }
    }
    do {
      return try HEVCFormat(
        vps: sets(.videoParameterSet), sps: sets(.sequenceParameterSet),
        pps: sets(.pictureParameterSet), nalLengthSize: 4)
    } catch {
      throw .codec("libx265", reason: "its global header: \(error)")
    }
  }
}
