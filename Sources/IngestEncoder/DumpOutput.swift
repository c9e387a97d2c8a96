import IngestCore
import IngestPOSIX

/// The dump stream on standard output, shared by the threads that encode (video and app audio on
/// one, a separate mic source on another). Each record is written whole under the lock.
///
/// Times are host-clock nanoseconds (CLOCK_MONOTONIC), written as `value/1000000000`.
final class DumpOutput: Sendable {
  /// The writer and its sink (its buffer and the pipe), owned by the lock.
  private let writer: ConditionLock<DumpWriter<StandardOutputSink>>

  /// Writes the dump header.
  init(output: FileDescriptor = .standardOutput) throws(EncoderError) {
    do {
      // The sink is made here, so that its buffer (reserved at once) has no other owner.
      var writer = try DumpWriter(sink: StandardOutputSink(output: output))
      try Self.flush(&writer)
      self.writer = ConditionLock(writer)
    } catch {
      throw .output("\(error)")
    }
  }

  /// Announces (or changes) a track's codec configuration.
  /// - Returns: false when the reader went away.
  func writeFormat(_ format: FormatDescription, for kind: SampleKind) throws(EncoderError) -> Bool {
    do {
      return try writer.withLock { writer in
        try writer.writeFormat(format, for: kind)
        return try Self.flush(&writer)
      }
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
    do {
      return try writer.withLock { writer in
        try writer.writeSample(
          kind: kind, pts: Self.time(ptsNanoseconds), dts: dtsNanoseconds.map { Self.time($0) },
          isKeyframe: isKeyframe, payload: payload)
        return try Self.flush(&writer)
      }
    } catch {
      throw .output("\(error)")
    }
  }

  private static func time(_ nanoseconds: Int64) -> MediaTime {
    MediaTime(value: nanoseconds, timescale: MediaTime.nanosecondTimescale)
  }

  @discardableResult
  private static func flush(_ writer: inout DumpWriter<StandardOutputSink>) throws(Errno) -> Bool {
    try writer.withSink { (sink: inout StandardOutputSink) throws(Errno) in try sink.flush() }
    return !writer.sink.readerGone
  }
}
