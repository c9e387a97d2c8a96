import IngestFFmpeg

/// One packet read from a media file, in the container's order.
public struct DemuxedPacket: Sendable {
  /// Index of the stream it belongs to.
  public var streamIndex: Int
  /// Presentation and decode time in the stream's time base, when the container has them.
  public var pts: Int64?
  public var dts: Int64?
  /// AV_PKT_FLAG_KEY.
  public var isKeyframe: Bool
  /// The packet's bytes as stored (AVCC or Annex B, raw AAC or ADTS).
  public var data: [UInt8]
}

/// Reads the packets of any container libavformat knows (mp4, mov, flv, ts, mkv, ...).
public final class MediaFileDemuxer {
  /// The input's streams, indexed by stream index.
  public let streams: [DemuxedStream]
  private let input: AVFormatInput
  private let packet = AVPacketHandle()

  /// Opens `path` and probes its streams.
  public init(path: String) throws(CaptureError) {
    input = try AVFormatInput(path: path)
    streams = input.streams
  }

  /// The next packet, or `nil` at the end of the input.
  public func nextPacket() throws(CaptureError) -> DemuxedPacket? {
    guard try input.read(into: packet) else { return nil }
    return DemuxedPacket(
      streamIndex: packet.streamIndex, pts: packet.pts, dts: packet.dts,
      isKeyframe: packet.isKeyframe, data: packet.bytes)
  }
}
