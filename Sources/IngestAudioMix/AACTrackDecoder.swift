import CFFmpeg
import IngestCore

/// One AAC track decoded by libavcodec and brought to the mix's rate and channels by
/// libswresample, into a planar float buffer the decoder owns (allocated once).
///
/// In steady state a frame costs five heap allocations inside libavcodec, the fewest its API
/// allows (seven and a half before, on average over a stereo and a mono track): the reference
/// `avcodec_send_packet` takes to the packet's buffer (refcounted and reused, so libavcodec does
/// not copy the payload into a new buffer of three allocations), the reference to the decoded
/// frame's one buffer (every plane in one buffer from this decoder's pool, where libavcodec's
/// own pool takes one per plane), and the three of the per-frame bookkeeping libavcodec
/// attaches to every decoded frame (`ff_attach_decode_data`), which no option avoids.
final class AACTrackDecoder {
  /// The track's configuration, as its format record gave it.
  let format: AACFormat
  private var context: UnsafeMutablePointer<AVCodecContext>?
  private var packet: UnsafeMutablePointer<AVPacket>?
  private var frame: UnsafeMutablePointer<AVFrame>?
  /// The decoded frames' buffers (`cffmpeg_pooled_get_buffer2`), in the context's `opaque`.
  private let framePool: UnsafeMutablePointer<CFFmpegFramePool>
  private var resampler: OpaquePointer?
  /// Channels the resampler writes: the mix's, or one for a mono track, whose one channel then
  /// goes to every channel of the mix at its own level (libswresample would spread it at -3 dB).
  private var resampledChannels = 1
  private let mixRate: Int
  private let mixChannels: Int
  /// Room, per channel, for what one packet can resample to (2048 samples at the lowest
  /// rate up to the highest, and what the resampler held back).
  private let capacity: Int
  private let output: UnsafeMutableBufferPointer<Float>
  /// The planes of `output`, as libswresample takes them.
  private let planes: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>

  /// Samples per channel of the output buffer for a track of `format`: what one packet (up to
  /// 2048 samples) resamples to at `mixRate`, and what the resampler held back.
  static func capacity(format: AACFormat, mixRate: Int) -> Int {
    (2048 * mixRate + format.sampleRate - 1) / format.sampleRate + 256
  }

  /// Bytes of one buffer of the decoded frames' pool: 2048 planar float samples (AAC with SBR)
  /// for each channel, and two for a mono track (parametric stereo decodes it as stereo).
  static func frameBufferBytes(format: AACFormat) -> Int {
    Int(cffmpeg_plane_bytes(2048 * MemoryLayout<Float>.size)) * max(format.channels, 2)
  }

  /// Bytes of the packet buffer first allocated: the largest raw AAC frame of 8 channels
  /// (6,144 bits a channel). A larger payload replaces it with one of its size.
  static let packetBytes = 8 * 768

  init(format: AACFormat, mixRate: Int, mixChannels: Int) throws(AudioMixStageError) {
    self.format = format
    self.mixRate = mixRate
    self.mixChannels = mixChannels
    capacity = Self.capacity(format: format, mixRate: mixRate)
    output = .allocate(capacity: capacity * mixChannels)
    output.initialize(repeating: 0)
    planes = .allocate(capacity: mixChannels)
    for channel in 0..<mixChannels {
      planes[channel] = UnsafeMutableRawPointer(output.baseAddress! + channel * capacity)
        .assumingMemoryBound(to: UInt8.self)
    }
    guard let codec = cffmpeg_codec_avcodec_find_decoder(AV_CODEC_ID_AAC) else {
      throw .codecMissing("AAC decoder")
    }
    framePool = .allocate(capacity: 1)
    let poolBytes = Self.frameBufferBytes(format: format)
    framePool.initialize(
      to: CFFmpegFramePool(pool: cffmpeg_codec_av_buffer_pool_init(poolBytes, nil), size: poolBytes)
    )
    context = cffmpeg_codec_avcodec_alloc_context3(codec)
    packet = cffmpeg_codec_av_packet_alloc()
    frame = cffmpeg_codec_av_frame_alloc()
    guard let context, let packet, frame != nil, framePool.pointee.pool != nil,
      let buffer = cffmpeg_codec_av_buffer_alloc(Self.packetBytes)
    else {
      throw .libav(step: "allocating the AAC decoder", message: "out of memory")
    }
    // The packet keeps its own reference to the buffer between calls; the payload is copied
    // into it, so libavcodec references it instead of copying it into a buffer of its own.
    packet.pointee.buf = buffer
    _ = cffmpeg_use_frame_pool(context, codec, framePool)
    // The AudioSpecificConfig, in a buffer libavcodec owns and frees (padded as it reads past).
    let config = format.audioSpecificConfig
    guard
      let extradata = cffmpeg_codec_av_mallocz(config.count + Int(cffmpeg_input_padding()))?
        .assumingMemoryBound(to: UInt8.self)
    else { throw .libav(step: "allocating the AAC decoder", message: "out of memory") }
    extradata.update(from: config, count: config.count)
    context.pointee.extradata = extradata
    context.pointee.extradata_size = Int32(config.count)
    context.pointee.sample_rate = Int32(format.sampleRate)
    cffmpeg_codec_av_channel_layout_default(&context.pointee.ch_layout, Int32(format.channels))
    try LibAVCall.check(
      cffmpeg_codec_avcodec_open2(context, codec, nil), "opening the AAC decoder")
  }

  deinit {
    cffmpeg_codec_swr_free(&resampler)
    cffmpeg_codec_av_frame_free(&frame)
    cffmpeg_codec_av_packet_free(&packet)
    cffmpeg_codec_avcodec_free_context(&context)
    // Frees the pool now, or when the last of its buffers comes back (none is out once the
    // frame and the context are freed).
    cffmpeg_codec_av_buffer_pool_uninit(&framePool.pointee.pool)
    framePool.deallocate()
    planes.deallocate()
    output.deallocate()
  }

  /// Decodes one raw AAC frame (no ADTS header) and hands `emit` what it resamples to: the
  /// count, the first sample's position at the mix rate, and each channel's samples.
  /// - Parameter position: the frame's time as a position at the mix rate.
  func decode(
    _ payload: UnsafeRawBufferPointer, position: Int64,
    emit: (_ count: Int, _ position: Int64, _ channel: (Int) -> UnsafePointer<Float>) -> Void
  ) throws(AudioMixStageError) {
    guard let context, let packet, let frame, payload.count > 0 else { return }
    let buffer = try packetBuffer(holding: payload.count)
    // The payload, then the zeroed padding libavcodec's bit reader may read into.
    let data = buffer.pointee.data!
    data.update(
      from: payload.baseAddress!.assumingMemoryBound(to: UInt8.self), count: payload.count)
    (data + payload.count).update(repeating: 0, count: Int(cffmpeg_input_padding()))
    packet.pointee.data = data
    packet.pointee.size = Int32(payload.count)
    try LibAVCall.check(
      cffmpeg_codec_avcodec_send_packet(context, packet), "decoding \(format.sampleRate) Hz AAC")
    var position = position
    while true {
      let code = cffmpeg_codec_avcodec_receive_frame(context, frame)
      if code == LibAVCall.again || code == LibAVCall.endOfFile { return }
      try LibAVCall.check(code, "decoding \(format.sampleRate) Hz AAC")
      defer { cffmpeg_codec_av_frame_unref(frame) }
      let resampler = try self.resampler(for: frame)
      // The samples the resampler still holds come out first: they are that much earlier.
      let held = cffmpeg_codec_swr_get_delay(resampler, Int64(mixRate))
      let input = UnsafeMutableRawPointer(frame.pointee.extended_data)!
        .assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
      let count = cffmpeg_codec_swr_convert(
        resampler, planes, Int32(capacity), input, frame.pointee.nb_samples)
      try LibAVCall.check(count, "resampling to \(mixRate) Hz")
      let base = output.baseAddress!
      let spread = resampledChannels == 1
      emit(Int(count), position - held) { UnsafePointer(base + (spread ? 0 : $0) * capacity) }
      position += Int64(frame.pointee.nb_samples) * Int64(mixRate) / Int64(format.sampleRate)
    }
  }

  /// The packet's buffer, ready to be written with `count` bytes and the input padding: the one
  /// it has, unless libavcodec still holds a reference to it (the AAC decoder lets go of each
  /// packet before `avcodec_send_packet` returns) or it is too small; then a new one.
  private func packetBuffer(holding count: Int) throws(AudioMixStageError)
    -> UnsafeMutablePointer<AVBufferRef>
  {
    let packet = packet!
    let needed = count + Int(cffmpeg_input_padding())
    if let buffer = packet.pointee.buf, cffmpeg_codec_av_buffer_is_writable(buffer) != 0,
      buffer.pointee.size >= needed
    {
      return buffer
    }
    cffmpeg_codec_av_buffer_unref(&packet.pointee.buf)
    guard let buffer = cffmpeg_codec_av_buffer_alloc(max(needed, Self.packetBytes)) else {
      throw .libav(step: "decoding \(format.sampleRate) Hz AAC", message: "out of memory")
    }
    packet.pointee.buf = buffer
    return buffer
  }

  /// The resampler from the decoder's output (its sample format, rate and layout, known from
  /// the first frame) to planar float at the mix's rate and channels (one for a mono track);
  /// made once.
  private func resampler(for frame: UnsafeMutablePointer<AVFrame>) throws(AudioMixStageError)
    -> OpaquePointer
  {
    if let resampler { return resampler }
    resampledChannels = frame.pointee.ch_layout.nb_channels == 1 ? 1 : mixChannels
    var layout = AVChannelLayout()
    cffmpeg_codec_av_channel_layout_default(&layout, Int32(resampledChannels))
    defer { cffmpeg_codec_av_channel_layout_uninit(&layout) }
    var made: OpaquePointer?
    try LibAVCall.check(
      cffmpeg_codec_swr_alloc_set_opts2(
        &made, &layout, AV_SAMPLE_FMT_FLTP, Int32(mixRate), &frame.pointee.ch_layout,
        AVSampleFormat(frame.pointee.format), frame.pointee.sample_rate, 0, nil),
      "setting up the resampler")
    try LibAVCall.check(cffmpeg_codec_swr_init(made), "setting up the resampler")
    resampler = made
    return made!
  }
}
