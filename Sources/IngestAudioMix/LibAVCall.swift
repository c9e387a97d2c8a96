import CFFmpeg

#if canImport(Glibc)
  import Glibc
#endif

/// libav's result codes, checked in one place.
enum LibAVCall {
  static let again = cffmpeg_averror(EAGAIN)
  static let endOfFile = cffmpeg_averror_eof()

  /// Throws `.libav` naming `step` when `code` is an error. `step` is only built then: a
  /// string made per frame would be a heap allocation per frame.
  static func check(_ code: Int32, _ step: @autoclosure () -> String) throws(AudioMixStageError) {
    guard code < 0 else { return }
    throw .libav(step: step(), message: message(code))
  }

  static func message(_ code: Int32) -> String {
    var buffer = [CChar](repeating: 0, count: 128)
    _ = cffmpeg_codec_av_strerror(code, &buffer, buffer.count)
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
}
