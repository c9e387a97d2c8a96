import CFFmpeg
import Glibc

/// One publish through libavformat's `rtmp`/`rtmps` protocol, opened with `avio_open2` for
/// writing: the FLV bytes written to it are the stream. The protocol reads past the 13-byte FLV
/// header, turns each tag into an RTMP message of the tag's type and timestamp (a script tag
/// `onMetaData` into the data message `@setDataFrame`), and sends it on the publish stream;
/// what is inside a tag is never looked at, so E-RTMP tags pass as written. Connecting
/// (handshake, `connect`, `releaseStream`, `FCPublish`, `createStream`, `publish`) happens in
/// `avio_open2`; closing sends `FCUnpublish` and `deleteStream`.
final class RTMPConnection {
  private var io: UnsafeMutablePointer<AVIOContext>?

  /// Opens `url` for publishing with `settings` (an AVDictionary of protocol options, consumed)
  /// and `interrupt` polled while it blocks.
  /// - Returns: 0, or the AVERROR of the failure (nothing stays open then).
  func open(
    url: String, settings: inout OpaquePointer?, interrupt: AVIOInterruptCB
  ) -> Int32 {
    var callback = interrupt
    let opened = cffmpeg_avio_open2(&io, url, AVIO_FLAG_WRITE, &callback, &settings)
    if opened < 0 { io = nil }
    return opened
  }

  var isOpen: Bool { io != nil }

  /// The AVIO buffer's size (libavformat's default until opened).
  var bufferSize: Int { io.map { Int($0.pointee.buffer_size) } ?? 32_768 }

  /// Bytes handed to the protocol so far.
  var bytesWritten: Int64 { io?.pointee.bytes_written ?? 0 }

  /// Writes `parts` in order and pushes them to the socket.
  /// - Returns: 0, or the AVERROR the protocol gave (the connection is unusable after it).
  func write(_ parts: UnsafeRawBufferPointer...) -> Int32 { write(parts, flush: true) }

  /// Writes `parts` in order; with `flush` false they may wait in the AVIO buffer for the next
  /// write (the stream's opening tags wait for its first unit, so a server that closes the
  /// connection right after the publish is seen at a media write, as such).
  /// - Returns: 0, or the AVERROR the protocol gave (the connection is unusable after it).
  func write(_ parts: [UnsafeRawBufferPointer], flush: Bool) -> Int32 {
    guard let io else { return cffmpeg_averror(ENOTCONN) }
    for part in parts where part.count > 0 {
      cffmpeg_avio_write(
        io, part.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(part.count))
    }
    if flush { cffmpeg_avio_flush(io) }
    return io.pointee.error
  }

  /// Closes the publish (the protocol tells the server the stream ended).
  func close() {
    guard io != nil else { return }
    _ = cffmpeg_avio_closep(&io)
    io = nil
  }

  deinit { close() }
}
