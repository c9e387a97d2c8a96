import CFFmpegEncoder
import IngestCore

#if canImport(Glibc)
  import Glibc
#endif

/// One opened source (file, lavfi graph or X11 display): demuxes, decodes and converts its
/// streams, and hands each converted frame to the caller with its time on the source's clock.
///
/// Streams used: the best video stream (when `wantsVideo`), the first audio stream as app audio
/// (or as mic audio for a mic-only source) and the second as mic audio (when `wantsMic`).
final class MediaInput {
  /// One decoded stream.
  private final class Stream {
    let role: TrackRole
    var decoder: UnsafeMutablePointer<AVCodecContext>?
    let filter: StreamFilter

    init(role: TrackRole, decoder: UnsafeMutablePointer<AVCodecContext>, filter: StreamFilter) {
      self.role = role
      self.decoder = decoder
      self.filter = filter
    }

    deinit { avcodec_free_context(&decoder) }
  }

  private var context: UnsafeMutablePointer<AVFormatContext>?
  private var streams: [Int32: Stream] = [:]
  private let source: EncoderSource
  private let loop: Bool
  /// Nanoseconds added to the source's timestamps: the length of the passes already played.
  private var loopOffset: Int64 = 0
  private var firstTimestamp: Int64?
  private var passEnd: Int64 = 0
  private let videoFrameInterval: Int64
  /// The roles this input feeds.
  var roles: [TrackRole] { streams.values.map(\.role) }

  /// Opens `source`; `mic` makes its first audio stream the mic track (a `--mic` source).
  init(
    _ source: EncoderSource, options: EncoderOptions, wantsVideo: Bool, wantsMic: Bool,
    micOnly: Bool
  ) throws(EncoderError) {
    self.source = source
    loop = options.loop && wantsVideo
    videoFrameInterval = TimeSpan.nanosecondsPerSecond / Int64(options.fps)
    avdevice_register_all()
    var url: String
    var format: UnsafePointer<AVInputFormat>?
    var dictionary: OpaquePointer?
    defer { av_dict_free(&dictionary) }
    switch source {
    case .testPattern:
      url =
        "testsrc2=size=\(options.width)x\(options.height):rate=\(options.fps)[out0];"
        + "sine=frequency=1000:beep_factor=4:sample_rate=48000[out1];"
        + "sine=frequency=440:beep_factor=2:sample_rate=48000[out2]"
      format = av_find_input_format("lavfi")
    case .lavfi(let graph):
      url = graph
      format = av_find_input_format("lavfi")
    case .x11(let display):
      url = display
      format = av_find_input_format("x11grab")
      av_dict_set(&dictionary, "framerate", "\(options.fps)", 0)
    case .file(let path):
      url = path
      guard access(path, R_OK) == 0 else { throw .missingFile(path) }
    }
    var opened: UnsafeMutablePointer<AVFormatContext>?
    let code = avformat_open_input(&opened, url, format, &dictionary)
    guard code >= 0, let opened else {
      if case .x11(let display) = source {
        throw .unknownDisplay(display, reason: LibAV.message(code))
      }
      throw .cannotOpen(source.description, reason: LibAV.message(code))
    }
    context = opened
    try LibAV.check(avformat_find_stream_info(opened, nil), "reading \(source)")
    var audio: [Int32] = []
    var video: Int32 = -1
    for index in 0..<Int32(opened.pointee.nb_streams) {
      let type = opened.pointee.streams[Int(index)]!.pointee.codecpar.pointee.codec_type
      if type == AVMEDIA_TYPE_AUDIO { audio.append(index) }
    }
    if wantsVideo {
      video = av_find_best_stream(opened, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
      guard video >= 0 else { throw .noVideo(source.description) }
      try open(video, role: .video, options: options)
    }
    if micOnly {
      guard let first = audio.first else {
        throw .cannotOpen(source.description, reason: "no audio stream for the mic")
      }
      try open(first, role: .micAudio, options: options)
    } else {
      if let first = audio.first { try open(first, role: .appAudio, options: options) }
      if wantsMic, audio.count > 1 { try open(audio[1], role: .micAudio, options: options) }
    }
  }

  deinit { avformat_close_input(&context) }

  private func open(_ index: Int32, role: TrackRole, options: EncoderOptions) throws(EncoderError) {
    let stream = context!.pointee.streams[Int(index)]!
    let parameters = stream.pointee.codecpar!
    guard let codec = avcodec_find_decoder(parameters.pointee.codec_id) else {
      throw .codec("stream \(index) of \(source)", reason: "no decoder")
    }
    var decoder = avcodec_alloc_context3(codec)
    guard let opened = decoder else { throw .codec("decoder", reason: "out of memory") }
    do {
      try LibAV.check(
        avcodec_parameters_to_context(opened, parameters), "stream \(index) parameters")
      opened.pointee.pkt_timebase = stream.pointee.time_base
      try LibAV.check(avcodec_open2(opened, codec, nil), "opening the decoder of stream \(index)")
      let filter =
        role == .video
        ? try StreamFilter(
          video: opened, timeBase: stream.pointee.time_base, width: options.width,
          height: options.height)
        : try StreamFilter(
          audio: opened, timeBase: stream.pointee.time_base, channels: role == .micAudio ? 1 : 2)
      streams[index] = Stream(role: role, decoder: opened, filter: filter)
    } catch {
      avcodec_free_context(&decoder)
      throw error
    }
  }

  /// Reads the source to its end (again from the start with `loop`), calling `deliver` with each
  /// converted frame, its role and its time in nanoseconds from the source's first frame.
  /// `deliver` returns false to stop. The frame is only valid during the call.
  func run(
    _ deliver: (TrackRole, UnsafeMutablePointer<AVFrame>, Int64) throws(EncoderError) -> Bool
  ) throws(EncoderError) {
    var packet = av_packet_alloc()
    var decoded = av_frame_alloc()
    var converted = av_frame_alloc()
    defer {
      av_packet_free(&packet)
      av_frame_free(&decoded)
      av_frame_free(&converted)
    }
    guard let packet, let decoded, let converted else {
      throw .codec("frames", reason: "out of memory")
    }
    while true {
      let code = av_read_frame(context, packet)
      if code == LibAV.endOfFile || (code < 0 && source.isFile) {
        for (_, stream) in streams {
          guard try decode(stream, nil, decoded, converted, deliver) else { return }
        }
        guard loop, passEnd > 0 else { return }
        loopOffset += passEnd
        passEnd = 0
        for (_, stream) in streams { avcodec_flush_buffers(stream.decoder) }
        try LibAV.check(
          avformat_seek_file(context, -1, Int64.min, 0, 0, 0), "seeking to the start of \(source)")
        continue
      }
      if code == LibAV.again { continue }
      try LibAV.check(code, "reading \(source)")
      defer { av_packet_unref(packet) }
      guard let stream = streams[packet.pointee.stream_index] else { continue }
      guard try decode(stream, packet, decoded, converted, deliver) else { return }
    }
  }

  /// Decodes one packet (nil: drains the decoder) and delivers what the filter makes of it.
  private func decode(
    _ stream: Stream, _ packet: UnsafeMutablePointer<AVPacket>?,
    _ decoded: UnsafeMutablePointer<AVFrame>, _ converted: UnsafeMutablePointer<AVFrame>,
    _ deliver: (TrackRole, UnsafeMutablePointer<AVFrame>, Int64) throws(EncoderError) -> Bool
  ) throws(EncoderError) -> Bool {
    let sent = avcodec_send_packet(stream.decoder, packet)
    // A corrupt packet in a file costs that frame, not the run.
    guard sent >= 0 || sent == LibAV.endOfFile else { return true }
    while true {
      let code = avcodec_receive_frame(stream.decoder, decoded)
      if code == LibAV.again || code == LibAV.endOfFile { return true }
      guard code >= 0 else { return true }
      decoded.pointee.pts = decoded.pointee.best_effort_timestamp
      try stream.filter.push(decoded)
      av_frame_unref(decoded)
      while try stream.filter.pull(into: converted) {
        defer { av_frame_unref(converted) }
        guard converted.pointee.pts != LibAV.noTimestamp else { continue }
        let time = LibAV.nanoseconds(converted.pointee.pts, stream.filter.outputTimeBase)
        let first = firstTimestamp ?? time
        firstTimestamp = first
        let media = loopOffset + time - first
        if stream.role == .video { passEnd = max(passEnd, time - first + videoFrameInterval) }
        guard try deliver(stream.role, converted, media) else { return false }
      }
    }
  }
}
