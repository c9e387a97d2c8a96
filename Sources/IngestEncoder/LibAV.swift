import CFFmpegEncoder
import IngestCore

#if canImport(Glibc)
  import Glibc
#endif

/// The few libav helpers every wrapper in this module needs: error text and the EAGAIN/EOF codes.
enum LibAV {
  static let again = cffenc_averror(EAGAIN)
  static let endOfFile = cffenc_averror_eof()
  static let noTimestamp = cffenc_nopts()

  /// libav's text for an error code.
  static func message(_ code: Int32) -> String {
    withUnsafeTemporaryAllocation(of: CChar.self, capacity: 128) { buffer in
      av_strerror(code, buffer.baseAddress, buffer.count)
      return String(cString: buffer.baseAddress!)
    }
  }

  /// Throws `EncoderError.codec(what, …)` when `code` is negative.
  @discardableResult
  static func check(_ code: Int32, _ what: @autoclosure () -> String) throws(EncoderError) -> Int32
  {
    guard code >= 0 else { throw .codec(what(), reason: message(code)) }
    return code
  }

  /// Converts `value` from `from` to nanoseconds.
  static func nanoseconds(_ value: Int64, _ from: AVRational) -> Int64 {
    av_rescale_q(value, from, AVRational(num: 1, den: MediaTime.nanosecondTimescale))
  }
}
