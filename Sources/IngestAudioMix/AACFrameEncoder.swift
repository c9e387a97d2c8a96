import CFFmpeg
import IngestCore

/// libavcodec's AAC-LC encoder for the mixed track: planar float frames of 1024 samples in, AAC
/// frames out with their time in samples (the encoder's time base is one sample).
///
/// In steady state a frame costs four heap allocations inside libavcodec, the fewest its API
/// allows (five before, for stereo): the reference `avcodec_send_frame` takes to the input
/// frame's buffer (every channel in one buffer, so one reference, not one per channel), and
/// the three of the encoded packet: the AAC encoder writes into a buffer of its own, which
/// libavcodec copies into a new refcounted one (`av_packet_make_refcounted`: data, buffer and
/// reference). The encoder does not take buffers from the caller (no `AV_CODEC_CAP_DR1`).
final class AACFrameEncoder {
  /// Samples per frame the encoder takes.
  static let frameSamples = 1024

  /// What the encoder announced (its AudioSpecificConfig): the mixed track's format.
  let format: AACFormat
  private var context: UnsafeMutablePointer<AVCodecContext>?
  private var packet: UnsafeMutablePointer<AVPacket>?
  private var frame: UnsafeMutablePointer<AVFrame>?
  private let channels: Int

  init(sampleRate: Int, channels: Int, bitrate: Int) throws(AudioMixStageError) {
    self.channels = channels
    guard let codec = cffmpeg_codec_avcodec_find_encoder(AV_CODEC_ID_AAC) else {
      throw .codecMissing("AAC encoder")
    }
    context = cffmpeg_codec_avcodec_alloc_context3(codec)
    packet = cffmpeg_codec_av_packet_alloc()
    frame = cffmpeg_codec_av_frame_alloc()
    guard let context, packet != nil, let frame else {
      throw .libav(step: "allocating the AAC encoder", message: "out of memory")
    }
    context.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
    context.pointee.sample_rate = Int32(sampleRate)
    cffmpeg_codec_av_channel_layout_default(&context.pointee.ch_layout, Int32(channels))
    context.pointee.bit_rate = Int64(bitrate)
    context.pointee.time_base = AVRational(num: 1, den: Int32(sampleRate))
    context.pointee.flags |= cffmpeg_codec_flag_global_header()
    try LibAVCall.check(
      cffmpeg_codec_avcodec_open2(context, codec, nil), "opening the AAC encoder")
    let config = Array(
      UnsafeBufferPointer(
        start: context.pointee.extradata, count: Int(context.pointee.extradata_size)))
    do { format = try AACFormat(audioSpecificConfig: config) } catch {
      throw .format(
        track: "mixed", reason: "has an encoder configuration that is not AAC: \(error)")
    }
    // The one input frame, allocated here and refilled for every mixed frame.
    frame.pointee.nb_samples = Int32(Self.frameSamples)
    frame.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
    frame.pointee.sample_rate = Int32(sampleRate)
    try LibAVCall.check(
      cffmpeg_codec_av_channel_layout_copy(&frame.pointee.ch_layout, &context.pointee.ch_layout),
      "setting up the AAC encoder's frame")
    // Every channel in one buffer, so libavcodec's reference to the frame is one allocation.
    if channels <= Int(cffmpeg_frame_planes_max()) {
      let line = Int(cffmpeg_plane_bytes(Self.frameSamples * MemoryLayout<Float>.size))
      guard let buffer = cffmpeg_codec_av_buffer_alloc(line * channels) else {
        throw .libav(step: "allocating the AAC encoder's frame", message: "out of memory")
      }
      cffmpeg_frame_set_planes(frame, buffer, Int32(channels), Int32(line))
    } else {
      try LibAVCall.check(
        cffmpeg_codec_av_frame_get_buffer(frame, 0), "allocating the AAC encoder's frame")
    }
  }

  deinit {
    cffmpeg_codec_av_frame_free(&frame)
    cffmpeg_codec_av_packet_free(&packet)
    cffmpeg_codec_avcodec_free_context(&context)
  }

  /// Encodes `mixed` (nil: drains the encoder) and hands each AAC frame to `emit` with its time
  /// in samples (the encoder's priming frame comes first, one frame before the first input).
  func encode(
    _ mixed: AudioMixFrame?, emit: (_ payload: UnsafeRawBufferPointer, _ pts: Int64) -> Void
  ) throws(AudioMixStageError) {
    guard let context, let packet, let frame else { return }
    if let mixed {
      precondition(mixed.count == Self.frameSamples && mixed.channels == channels)
      // The encoder let go of the last frame's buffer when it returned its packets, so this
      // reuses it rather than allocating.
      try LibAVCall.check(cffmpeg_codec_av_frame_make_writable(frame), "encoding the mix")
      for channel in 0..<channels {
        let plane = UnsafeMutableRawPointer(frame.pointee.extended_data[channel]!)
          .assumingMemoryBound(to: Float.self)
        plane.update(from: mixed.channel(channel).baseAddress!, count: mixed.count)
      }
      frame.pointee.pts = mixed.position
    }
    let sent = cffmpeg_codec_avcodec_send_frame(context, mixed == nil ? nil : frame)
    if sent == LibAVCall.endOfFile { return }
    try LibAVCall.check(sent, "encoding the mix")
    while true {
      let code = cffmpeg_codec_avcodec_receive_packet(context, packet)
      if code == LibAVCall.again || code == LibAVCall.endOfFile { return }
      try LibAVCall.check(code, "encoding the mix")
      defer { cffmpeg_codec_av_packet_unref(packet) }
      emit(
        UnsafeRawBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size)),
        packet.pointee.pts)
    }
  }
}
