import CFFmpegEncoder
import IngestCore

/// libx264 through libavcodec, set up for live: zerolatency tuning (no lookahead, no frame
/// threading delay), no B-frames unless asked, a fixed GOP, bitrate capped by a quarter-second VBV.
///
/// Packets come out as AVCC (4-byte NAL lengths, x264's `annexb=0`) with the parameter sets in
/// the avcC configuration only, which is what a dump sample and VideoToolbox both carry.
/// Frame timestamps are microseconds (the encoder's time base), from the run's start.
final class VideoEncoder {
  private var context: UnsafeMutablePointer<AVCodecContext>?
  private var packet: UnsafeMutablePointer<AVPacket>?
  /// The avcC configuration the encoder announced.
  let format: H264Format
  /// The bitrate in force, bits per second.
  private(set) var bitrate: Int
  /// Nominal frames per encoded frame (2 at half the frame rate), applied to x264's target.
  private var frameRateScale = 1.0

  init(options: EncoderOptions) throws(EncoderError) {
    guard let codec = avcodec_find_encoder_by_name("libx264") else {
      throw .codec("H.264 encoder", reason: "libavcodec was built without libx264")
    }
    context = avcodec_alloc_context3(codec)
    packet = av_packet_alloc()
    guard let context, packet != nil else { throw .codec("H.264 encoder", reason: "out of memory") }
    bitrate = options.bitrate
    context.pointee.width = Int32(options.width)
    context.pointee.height = Int32(options.height)
    context.pointee.pix_fmt = AV_PIX_FMT_YUV420P
    context.pointee.time_base = AVRational(num: 1, den: 1_000_000)
    context.pointee.framerate = AVRational(num: Int32(options.fps), den: 1)
    context.pointee.gop_size = Int32(options.keyframeInterval)
    context.pointee.keyint_min = Int32(options.keyframeInterval)
    context.pointee.max_b_frames = Int32(options.bFrames)
    context.pointee.flags |= Int32(cffenc_flag_global_header())
    Self.apply(bitrate: options.bitrate, to: context)
    var settings: OpaquePointer?
    defer { av_dict_free(&settings) }
    av_dict_set(&settings, "preset", options.preset, 0)
    av_dict_set(&settings, "tune", "zerolatency", 0)
    // An I picture asked for through AVFrame.pict_type becomes an IDR, so receivers can join.
    av_dict_set(&settings, "forced-idr", "1", 0)
    // Length-prefixed NAL units; no scene-cut keyframes, so the GOP is what --gop says.
    av_dict_set(&settings, "x264-params", "annexb=0:scenecut=0", 0)
    try LibAV.check(avcodec_open2(context, codec, &settings), "opening libx264")
    format = try Self.avcFormat(context)
  }

  deinit {
    avcodec_free_context(&context)
    av_packet_free(&packet)
  }

  /// Changes the bitrate from the next frame on. libavcodec's libx264 wrapper compares
  /// bit_rate, rc_max_rate and rc_buffer_size with x264's parameters on every frame and calls
  /// x264_encoder_reconfig when they differ: rate control changes in place, no new SPS, no IDR.
  func setBitrate(_ bps: Int) {
    bitrate = bps
    Self.apply(bitrate: Int(Double(bps) * frameRateScale), to: context!)
  }

  /// Tells rate control that only `share` (0 < share ≤ 1) of the nominal frames are encoded.
  /// x264 without lookahead budgets bits per frame at the nominal rate, so dropping frames would
  /// lower the bitrate with them; scaling its target keeps the output at `bitrate`.
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
  /// `emit` with each packet that comes out: payload, pts and dts in microseconds, keyframe.
  func encode(
    _ frame: UnsafeMutablePointer<AVFrame>?, microseconds: Int64, idr: Bool,
    _ emit: (UnsafeRawBufferPointer, Int64, Int64, Bool) throws(EncoderError) -> Bool
  ) throws(EncoderError) -> Bool {
    if let frame {
      frame.pointee.pts = microseconds
      // A decoded frame keeps its source's picture type; only our own requests may force one.
      frame.pointee.pict_type = idr ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE
    }
    let sent = avcodec_send_frame(context, frame)
    guard sent != LibAV.endOfFile else { return true }
    try LibAV.check(sent, "encoding video")
    while true {
      let code = avcodec_receive_packet(context, packet)
      if code == LibAV.again || code == LibAV.endOfFile { return true }
      try LibAV.check(code, "encoding video")
      defer { av_packet_unref(packet) }
      let encoded = packet!.pointee
      let payload = UnsafeRawBufferPointer(start: encoded.data, count: Int(encoded.size))
      let keyframe = encoded.flags & Int32(cffenc_pkt_flag_key()) != 0
      guard try emit(payload, encoded.pts, encoded.dts, keyframe) else { return false }
    }
  }

  /// Parses the extradata x264 wrote with a global header: SPS and PPS, each with a 4-byte
  /// length (x264's SEI goes into the first packet instead).
  private static func avcFormat(_ context: UnsafeMutablePointer<AVCodecContext>)
    throws(EncoderError) -> H264Format
  {
    let bytes = Array(
      UnsafeBufferPointer(
        start: context.pointee.extradata, count: Int(context.pointee.extradata_size)))
    var sps: [[UInt8]] = []
    var pps: [[UInt8]] = []
    var offset = 0
    while offset + 4 <= bytes.count {
      let length = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
      offset += 4
      guard length > 0, offset + length <= bytes.count else { break }
      let unit = Array(bytes[offset..<offset + length])
      offset += length
      switch unit[0] & 0x1F {
      case 7: sps.append(unit)
      case 8: pps.append(unit)
      default: continue
      }
    }
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
}
