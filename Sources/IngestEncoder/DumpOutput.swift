import Foundation
import IngestCore
import IngestPOSIX

/// The dump stream on standard output, shared by the threads that encode (video and app audio on
/// one, a separate mic source on another). Each record is written whole under the lock.
///
/// Times are host-clock nanoseconds (CLOCK_MONOTONIC), written as `value/1000000000`.
///
/// `@unchecked` because the writer and its sink are not `Sendable`: `lock` guards them, and
/// neither leaves this class.
final class DumpOutput: @unchecked Sendable {
  private let lock = NSLock()
  private var writer: DumpWriter<StandardOutputSink>

  /// Writes the dump header.
  init(sink: StandardOutputSink = StandardOutputSink()) throws(EncoderError) {
    do {
      var writer = try DumpWriter(sink: sink)
      try Self.flush(&writer)
      self.writer = writer
    } catch {
      throw .output("\(error)")
    }
  }

  /// Announces (or changes) a track's codec configuration.
  /// - Returns: false when the reader went away.
  func writeFormat(_ format: FormatDescription, for kind: SampleKind) throws(EncoderError) -> Bool {
    lock.lock()
    defer { lock.unlock() }
    do {
      try writer.writeFormat(format, for: kind)
      return try Self.flush(&writer)
    } catch {
      throw .output("\(error)")
    }
  }

  /// Writes one encoded frame.
  /// - Returns: false when the reader went away.
  func writeSample(
    kind: SampleKind, ptsNanoseconds: Int64, dtsNanoseconds: Int64?, isKeyframe: Bool,
    payload: UnsafeRawBufferPointer
  ) throws(EncoderError) -> Bool {
    lock.lock()
    defer { lock.unlock() }
    do {
      try writer.writeSample(
        kind: kind, pts: Self.time(ptsNanoseconds), dts: dtsNanoseconds.map { Self.time($0) },
        isKeyframe: isKeyframe, payload: payload)
      return try Self.flush(&writer)
    } catch {
      throw .output("\(error)")
    }
  }

  private static func time(_ nanoseconds: Int64) -> MediaTime {
    MediaTime(value: nanoseconds, timescale: 1_000_000_000)
  }

  @discardableResult
  private static func flush(_ writer: inout DumpWriter<StandardOutputSink>) throws(Errno) -> Bool {
    try writer.sink.flush()
    return !writer.sink.readerGone
  }
}
