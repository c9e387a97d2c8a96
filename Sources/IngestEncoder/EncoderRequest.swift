import Foundation

/// One request on the control channel: a JSON object on one line, in the shape the pipeline's
/// `StatusReporter` emits (`onEncoderRequest`):
///
/// ```
/// {"request":"bitrate","target_bps":1200000}     {"request":"bitrate","restore":true}
/// {"request":"frameRate","target_fps":15}        ("fps" is accepted for "target_fps")
/// {"request":"mic","enabled":false}              {"request":"keyframe"}
/// {"request":"keyframesOnly","enabled":true}
/// ```
///
/// Other members are ignored, so a status event line can be forwarded as it is.
public enum EncoderRequest: Equatable, Sendable {
  /// A new video bitrate in bits per second; nil returns to the configured one.
  case bitrate(Int?)
  /// Encode at most this many frames per second (at or above the source's rate: every frame).
  case frameRate(Double)
  /// Mic audio on, or replaced by encoded silence on the same track.
  case mic(Bool)
  /// An IDR picture on the next frame.
  case keyframe
  /// Every frame an IDR picture (on), or the normal GOP again (off).
  case keyframesOnly(Bool)

  /// The request's name as it appears on the wire.
  public var name: String {
    switch self {
    case .bitrate: "bitrate"
    case .frameRate: "frameRate"
    case .mic: "mic"
    case .keyframe: "keyframe"
    case .keyframesOnly: "keyframesOnly"
    }
  }

  /// Parses one line.
  /// - Throws: `EncoderRequestError` naming what is wrong; the caller reports it and goes on.
  public init(line: String) throws(EncoderRequestError) {
    let wire: Wire
    do {
      wire = try JSONDecoder().decode(Wire.self, from: Data(line.utf8))
    } catch DecodingError.typeMismatch(_, let context), DecodingError.keyNotFound(_, let context) {
      let key = context.codingPath.last?.stringValue ?? "request"
      throw EncoderRequestError("\"\(key)\" is missing or of the wrong type")
    } catch {
      throw EncoderRequestError("not a JSON object")
    }
    switch wire.request {
    case "bitrate":
      if wire.restore == true {
        self = .bitrate(nil)
      } else {
        guard let bps = wire.target_bps else { throw EncoderRequestError("no \"target_bps\"") }
        guard bps >= 10_000, bps <= 200_000_000 else {
          throw EncoderRequestError("target_bps \(bps) is out of 10000...200000000")
        }
        self = .bitrate(Int(bps))
      }
    case "frameRate":
      guard let fps = wire.target_fps ?? wire.fps else {
        throw EncoderRequestError("no \"target_fps\"")
      }
      guard fps > 0, fps <= 240 else { throw EncoderRequestError("target_fps must be in (0, 240]") }
      self = .frameRate(fps)
    case "mic", "keyframesOnly":
      guard let enabled = wire.enabled else { throw EncoderRequestError("no \"enabled\"") }
      self = wire.request == "mic" ? .mic(enabled) : .keyframesOnly(enabled)
    case "keyframe": self = .keyframe
    default: throw EncoderRequestError("unknown request \"\(wire.request)\"")
    }
  }

  /// The members a request may carry; JSONDecoder keeps numbers and booleans apart.
  private struct Wire: Decodable {
    var request: String
    var target_bps: Double?
    var restore: Bool?
    var target_fps: Double?
    var fps: Double?
    var enabled: Bool?
  }
}
