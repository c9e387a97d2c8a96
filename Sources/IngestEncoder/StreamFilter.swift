import CFFmpegEncoder

/// A libavfilter graph that turns one decoded stream into what its encoder takes: yuv420p at the
/// output size for video; 48 kHz planar float in frames of exactly 1024 samples for AAC.
///
/// ```
/// video: buffer  -> scale=W:H -> format=yuv420p                  -> buffersink
/// audio: abuffer -> aresample=48000 -> aformat=fltp:LAYOUT        -> abuffersink (1024 per frame)
/// ```
final class StreamFilter {
  private var graph: UnsafeMutablePointer<AVFilterGraph>?
  private let source: UnsafeMutablePointer<AVFilterContext>
  private let sink: UnsafeMutablePointer<AVFilterContext>
  /// The time base of the frames `pull` returns.
  let outputTimeBase: AVRational

  /// A video graph for frames as `decoder` produces them.
  convenience init(
    video decoder: UnsafeMutablePointer<AVCodecContext>, timeBase: AVRational, width: Int,
    height: Int
  ) throws(EncoderError) {
    let sar = decoder.pointee.sample_aspect_ratio
    let aspect = sar.num > 0 && sar.den > 0 ? "\(sar.num)/\(sar.den)" : "1/1"
    try self.init(
      source: "buffer",
      arguments: "video_size=\(decoder.pointee.width)x\(decoder.pointee.height)"
        + ":pix_fmt=\(decoder.pointee.pix_fmt.rawValue)"
        + ":time_base=\(timeBase.num)/\(timeBase.den):pixel_aspect=\(aspect)",
      chain: [("scale", "w=\(width):h=\(height)"), ("format", "pix_fmts=yuv420p")],
      sink: "buffersink", frameSize: nil)
  }

  /// An audio graph for frames as `decoder` produces them, to `channels` (1 or 2).
  convenience init(
    audio decoder: UnsafeMutablePointer<AVCodecContext>, timeBase: AVRational, channels: Int
  ) throws(EncoderError) {
    var layout = decoder.pointee.ch_layout
    if layout.order == AV_CHANNEL_ORDER_UNSPEC {
      av_channel_layout_default(&layout, layout.nb_channels)
    }
    let layoutName = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
      av_channel_layout_describe(&layout, buffer.baseAddress, buffer.count)
      return String(cString: buffer.baseAddress!)
    }
    let formatName = av_get_sample_fmt_name(decoder.pointee.sample_fmt).map { String(cString: $0) }
    try self.init(
      source: "abuffer",
      arguments: "time_base=\(timeBase.num)/\(timeBase.den)"
        + ":sample_rate=\(decoder.pointee.sample_rate):sample_fmt=\(formatName ?? "s16")"
        + ":channel_layout=\(layoutName)",
      chain: [
        ("aresample", "48000"),
        ("aformat", "sample_fmts=fltp:channel_layouts=\(channels == 1 ? "mono" : "stereo")"),
      ],
      sink: "abuffersink", frameSize: AudioEncoder.frameSize)
  }

  private init(
    source sourceName: String, arguments: String, chain: [(String, String)], sink sinkName: String,
    frameSize: Int?
  ) throws(EncoderError) {
    var owned = avfilter_graph_alloc()
    guard let graph = owned else { throw .codec("filter graph", reason: "out of memory") }
    func make(_ name: String, _ arguments: String?) throws(EncoderError)
      -> UnsafeMutablePointer<AVFilterContext>
    {
      var context: UnsafeMutablePointer<AVFilterContext>?
      let code = avfilter_graph_create_filter(
        &context, avfilter_get_by_name(name), name, arguments, nil, graph)
      guard code >= 0, let context else {
        throw .codec("filter \(name)=\(arguments ?? "")", reason: LibAV.message(code))
      }
      return context
    }
    do {
      source = try make(sourceName, arguments)
      sink = try make(sinkName, nil)
      var previous = source
      for (name, arguments) in chain {
        let next = try make(name, arguments)
        try LibAV.check(avfilter_link(previous, 0, next, 0), "linking \(name)")
        previous = next
      }
      try LibAV.check(avfilter_link(previous, 0, sink, 0), "linking \(sinkName)")
      try LibAV.check(avfilter_graph_config(graph, nil), "configuring the filter graph")
    } catch {
      avfilter_graph_free(&owned)
      throw error
    }
    self.graph = graph
    if let frameSize { av_buffersink_set_frame_size(sink, UInt32(frameSize)) }
    outputTimeBase = av_buffersink_get_time_base(sink)
  }

  deinit { avfilter_graph_free(&graph) }

  /// Hands a decoded frame (or nil at the end of the stream) to the graph.
  func push(_ frame: UnsafeMutablePointer<AVFrame>?) throws(EncoderError) {
    try LibAV.check(
      av_buffersrc_add_frame_flags(source, frame, Int32(cffenc_buffersrc_keep_ref())),
      "feeding the filter graph")
  }

  /// Takes the next converted frame into `frame`; false when the graph needs more input.
  func pull(into frame: UnsafeMutablePointer<AVFrame>) throws(EncoderError) -> Bool {
    let code = av_buffersink_get_frame(sink, frame)
    if code == LibAV.again || code == LibAV.endOfFile { return false }
    try LibAV.check(code, "reading the filter graph")
    return true
  }
}
