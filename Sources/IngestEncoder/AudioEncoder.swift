import CFFmpegEncoder
import IngestCore

/// libavcodec's native AAC-LC encoder at 48 kHz for one track. Frames carry their position in
/// samples since the track's first frame (the encoder's time base is 1/48000), so the track's
/// clock is the sample count: exact, and unaffected by what the source's timestamps do.
final class AudioEncoder {
  /// Samples per AAC frame; the filter graph delivers frames of exactly this size.
  static let frameSize = 1024
  /// The sample rate of every track.
  static let sampleRate = 48_000

  private var context: UnsafeMutablePointer<AVCodecContext>?
  private var packet: UnsafeMutablePointer<AVPacket>?
  /// The AudioSpecificConfig the encoder announced.
  let format: AACFormat
  /// Samples handed to the encoder so far.
  private(set) var samples: Int64 = 0

  init(channels: Int, bitrate: Int) throws(EncoderError) {
    guard let codec = avcodec_find_encoder(AV_CODEC_ID_AAC) else {
      throw .codec("AAC encoder", reason: "not in libavcodec")
    }
    context = avcodec_alloc_context3(codec)
    packet = av_packet_alloc()
    guard let context, packet != nil else { throw .codec("AAC encoder", reason: "out of memory") }
    context.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
    context.pointee.sample_rate = Int32(Self.sampleRate)
    av_channel_layout_default(&context.pointee.ch_layout, Int32(channels))
    context.pointee.bit_rate = Int64(bitrate)
    context.pointee.time_base = AVRational(num: 1, den: Int32(Self.sampleRate))
    context.pointee.flags |= Int32(cffenc_flag_global_header())
    try LibAV.check(avcodec_open2(context, codec, nil), "opening the AAC encoder")
    let config = Array(
      UnsafeBufferPointer(
        start: context.pointee.extradata, count: Int(context.pointee.extradata_size)))
    do {
      format = try AACFormat(audioSpecificConfig: config)
    } catch {
      throw .codec("AAC encoder", reason: "\(error)")
    }
  }

  deinit {
    avcodec_free_context(&context)
    av_packet_free(&packet)
  }

  /// Encodes `frame` (nil: drains), as silence when `silent`; calls `emit` with each packet:
  /// payload and pts in samples since the track's start (negative for the encoder's priming).
  func encode(
    _ frame: UnsafeMutablePointer<AVFrame>?, silent: Bool,
    _ emit: (UnsafeRawBufferPointer, Int64) throws(EncoderError) -> Bool
  ) throws(EncoderError) -> Bool {
    if let frame {
      if silent {
        try LibAV.check(av_frame_make_writable(frame), "muting the mic")
        av_samples_set_silence(
          frame.pointee.extended_data, 0, frame.pointee.nb_samples,
          frame.pointee.ch_layout.nb_channels, AVSampleFormat(frame.pointee.format))
      }
      frame.pointee.pts = samples
      samples += Int64(frame.pointee.nb_samples)
    }
    let sent = avcodec_send_frame(context, frame)
    guard sent != LibAV.endOfFile else { return true }
    try LibAV.check(sent, "encoding audio")
    while true {
      let code = avcodec_receive_packet(context, packet)
      if code == LibAV.again || code == LibAV.endOfFile { return true }
      try LibAV.check(code, "encoding audio")
      defer { av_packet_unref(packet) }
      let encoded = packet!.pointee
      let payload = UnsafeRawBufferPointer(start: encoded.data, count: Int(encoded.size))
      guard try emit(payload, encoded.pts) else { return false }
    }
  }
}
