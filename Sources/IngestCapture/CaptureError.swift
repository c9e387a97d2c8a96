import IngestCore
import IngestPOSIX

/// Why turning a media file into captured samples failed, naming the file, stream and packet.
public enum CaptureError: Error, Equatable, Sendable, CustomStringConvertible {
  /// A libavformat call failed (`operation` is the function, `message` av_strerror's text).
  case libav(operation: String, path: String, code: Int32, message: String)
  /// The requested stream index does not exist in the input.
  case noSuchStream(index: Int, streamCount: Int)
  /// The stream chosen for a role has the wrong media type, or already has another role.
  case unsupportedStream(index: Int, role: String, found: String)
  /// The stream chosen for the `kind` track (by index, or as the input's first of its media
  /// type) has a codec that capture cannot convert: H.264 and HEVC video and AAC audio are.
  case unsupportedCodec(index: Int, kind: SampleKind, found: String)
  /// The H.264 configuration or a packet's NAL framing is invalid.
  case h264(stream: Int, packet: Int, FormatError)
  /// The HEVC configuration, in-band parameter sets or a packet's NAL framing is invalid.
  case hevc(stream: Int, packet: Int, FormatError)
  /// The video stream ended without its parameter sets (SPS and PPS; for HEVC also the VPS),
  /// so no configuration record could be built.
  case missingParameterSets(stream: Int)
  /// The AAC configuration or an ADTS header is invalid.
  case aac(stream: Int, packet: Int, reason: String)
  /// Nothing to capture: no stream selected.
  case nothingSelected
  /// libavformat could not be loaded.
  case libraryUnavailable(String)

  public var description: String {
    switch self {
    case .libav(let operation, let path, let code, let message):
      "\(operation) failed for \(SystemPath.display(path)): \(message) (\(code))"
    case .noSuchStream(let index, let count):
      "no stream \(index) in the input (it has \(count) streams, 0...\(max(count - 1, 0)))"
    case .unsupportedStream(let index, let role, let found):
      "stream \(index) cannot be the \(role) track: it is \(found)"
    case .unsupportedCodec(let index, let kind, let found):
      "stream \(index) (\(found)) cannot be the \(MediaFileCapture.role(kind)) track: capture "
        + (kind == .video ? "converts H.264 and HEVC video only" : "converts AAC audio only")
    case .h264(let stream, let packet, let error): "stream \(stream), packet \(packet): \(error)"
    case .hevc(let stream, let packet, let error): "stream \(stream), packet \(packet): \(error)"
    case .missingParameterSets(let stream):
      "stream \(stream): no parameter sets found, cannot describe the video track"
    case .aac(let stream, let packet, let reason): "stream \(stream), packet \(packet): \(reason)"
    case .nothingSelected: "no stream selected"
    case .libraryUnavailable(let message): message
    }
  }
}
