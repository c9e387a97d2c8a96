import CFFmpeg
import IngestCore
import IngestFFmpeg
import IngestPOSIX

/// Owns one demuxing `AVFormatContext`; every libav error is mapped to `CaptureError` here.
final class AVFormatInput {
  let path: String
  private var context: UnsafeMutablePointer<AVFormatContext>?

  init(path: String) throws(CaptureError) {
    self.path = path
    if let failure = FFmpegLibrary.loadFailure {
      throw .libraryUnavailable(
        LibraryLoadFailure.message(
          soname: failure.soname, reason: failure.reason, install: FFmpegLibrary.install))
    }
    var context: UnsafeMutablePointer<AVFormatContext>?
    // The bytes of the name as given, also when they are not UTF-8 (see `SystemPath`).
    let opened = SystemPath.withCString(path) {
      cffmpeg_avformat_open_input(&context, $0, nil, nil)
    }
    guard opened >= 0, context != nil else {
      throw Self.error("avformat_open_input", path: path, code: opened)
    }
    self.context = context
    let found = cffmpeg_avformat_find_stream_info(context, nil)
    guard found >= 0 else {
      cffmpeg_avformat_close_input(&self.context)
      throw Self.error("avformat_find_stream_info", path: path, code: found)
    }
  }

  deinit { cffmpeg_avformat_close_input(&context) }

  /// What the container says about each stream.
  var streams: [DemuxedStream] {
    guard let context else { return [] }
    return (0..<Int(context.pointee.nb_streams)).compactMap { index in
      guard let stream = context.pointee.streams[index], let parameters = stream.pointee.codecpar
      else { return nil }
      let p = parameters.pointee
      let mediaType: DemuxedStream.MediaType =
        switch p.codec_type {
        case AVMEDIA_TYPE_VIDEO: .video
        case AVMEDIA_TYPE_AUDIO: .audio
        default: .other
        }
      let codec: DemuxedStream.Codec =
        switch p.codec_id {
        case AV_CODEC_ID_H264: .h264
        case AV_CODEC_ID_HEVC: .hevc
        case AV_CODEC_ID_AAC: .aac
        default: .other(String(cString: cffmpeg_avcodec_get_name(p.codec_id)))
        }
      var extradata: [UInt8] = []
      if let data = p.extradata, p.extradata_size > 0 {
        extradata = Array(UnsafeBufferPointer(start: data, count: Int(p.extradata_size)))
      }
      return DemuxedStream(
        index: index, mediaType: mediaType, codec: codec,
        timeBase: DemuxedStream.TimeBase(
          numerator: stream.pointee.time_base.num, denominator: stream.pointee.time_base.den),
        extradata: extradata, sampleRate: Int(p.sample_rate),
        channels: Int(p.ch_layout.nb_channels), width: Int(p.width), height: Int(p.height))
    }
  }

  /// Reads the next packet into `packet`; false at the end of the input.
  func read(into packet: AVPacketHandle) throws(CaptureError) -> Bool {
    packet.unref()
    let result = cffmpeg_av_read_frame(context, packet.pointer)
    if result == cffmpeg_averror_eof() { return false }
    guard result >= 0 else { throw Self.error("av_read_frame", path: path, code: result) }
    return true
  }

  private static func error(_ operation: String, path: String, code: Int32) -> CaptureError {
    var text = [CChar](repeating: 0, count: 256)
    if cffmpeg_av_strerror(code, &text, text.count) < 0 {
      return .libav(operation: operation, path: path, code: code, message: "unknown error")
    }
    let message = String(
      decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return .libav(operation: operation, path: path, code: code, message: message)
  }
}
