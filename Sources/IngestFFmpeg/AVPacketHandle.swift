import CFFmpeg

/// Owns one `AVPacket`, reused for every read.
package final class AVPacketHandle {
  package let pointer: UnsafeMutablePointer<AVPacket>

  package init() {
    // av_packet_alloc fails only when out of memory, where nothing sensible remains to be done.
    guard let packet = cffmpeg_av_packet_alloc() else {
      fatalError("av_packet_alloc: out of memory")
    }
    pointer = packet
  }

  deinit {
    var packet: UnsafeMutablePointer<AVPacket>? = pointer
    cffmpeg_av_packet_free(&packet)
  }

  /// AV_NOPTS_VALUE is a cast expression Swift cannot import; its value is INT64_MIN.
  private static let noTimestamp = Int64.min

  package var streamIndex: Int { Int(pointer.pointee.stream_index) }
  package var pts: Int64? { pointer.pointee.pts == Self.noTimestamp ? nil : pointer.pointee.pts }
  package var dts: Int64? { pointer.pointee.dts == Self.noTimestamp ? nil : pointer.pointee.dts }
  package var isKeyframe: Bool { pointer.pointee.flags & AV_PKT_FLAG_KEY != 0 }

  /// A copy of the packet's bytes.
  package var bytes: [UInt8] {
    guard let data = pointer.pointee.data, pointer.pointee.size > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: Int(pointer.pointee.size)))
  }

  package func unref() { cffmpeg_av_packet_unref(pointer) }
}
