/// What the pipeline asks of the encoder in front of it: the one typed control message between a
/// run (the rate controller, the degradation ladder, a host) and the encoder (`ingest-encode`, or
/// VideoToolbox in an extension).
///
/// On the encoder's input pipe a request is one JSON object on one line
/// (`docs/encoder.md`):
///
/// ```
/// {"request":"bitrate","target_bps":1200000}     {"request":"bitrate","restore":true}
/// {"request":"frameRate","target_fps":15}        ("fps" is read when "target_fps" is absent)
/// {"request":"mic","enabled":false}              {"request":"keyframe"}
/// {"request":"keyframesOnly","enabled":true}  {"request":"profile","profile":"baseline"}
/// ```
///
/// `line` writes that form and `init(line:)` (or `EncoderRequestDecoder`, for a byte stream)
/// reads it back. Other members are ignored when reading, so an `encoder` status event line
/// can be forwarded to the encoder as it is.
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
  /// H.264 in this profile from the next keyframe on (the one a WebRTC receiver negotiated);
  /// on the wire its `rawValue`: `baseline`, `main`, `high`.
  case profile(H264Profile)

  /// The bitrates the encoder takes, in bits per second.
  public static let bitrateRange = 10_000...200_000_000
  /// The frame rates the encoder takes: above 0, at most 240.
  public static let maximumFrameRate = 240.0

  /// The request's name as it appears on the wire (`"request"`).
  public var name: String {
    switch self {
    case .bitrate: "bitrate"
    case .frameRate: "frameRate"
    case .mic: "mic"
    case .keyframe: "keyframe"
    case .keyframesOnly: "keyframesOnly"
    case .profile: "profile"
    }
  }

  /// The request as a JSON object: `request` first, then its value.
  public var json: JSONObject {
    var object = JSONObject()
    object.add("request", name)
    addValue(to: &object)
    return object
  }

  /// The request's members after `request` (its value), appended to `object`: how an `encoder`
  /// status event carries it.
  public func addValue(to object: inout JSONObject) {
    switch self {
    case .bitrate(let bps?): object.add("target_bps", bps)
    case .bitrate(nil): object.add("restore", true)
    case .frameRate(let fps):
      // A whole rate is written as an integer: the form readers (and `ingest-encode` before
      // the rate was a number of any kind) know.
      if fps.rounded() == fps && abs(fps) < 1e9 {
        object.add("target_fps", Int(fps))
      } else {
        object.add("target_fps", fps, decimals: 3)
      }
    case .mic(let on), .keyframesOnly(let on): object.add("enabled", on)
    case .keyframe: break
    case .profile(let profile): object.add("profile", profile.rawValue)
    }
  }

  /// The request's line on the encoder's input, without the newline.
  public var line: String { json.rendered }

  /// Reads one line (without its newline; spaces around the object are allowed).
  /// - Throws: `EncoderRequestError` naming what is wrong.
  public init(line: some StringProtocol) throws(EncoderRequestError) {
    try self.init(lineBytes: Array(line.utf8))
  }

  /// Deeper nesting than any status line has is refused.
  static let maximumDepth = 16

  /// Reads the bytes of one line (`EncoderRequestDecoder` splits the stream into lines).
  init(lineBytes: [UInt8]) throws(EncoderRequestError) {
    let members: [(String, JSONValue)]
    do {
      members = try JSONValue.members(ofLine: lineBytes, maximumDepth: Self.maximumDepth)
    } catch {
      throw .malformedJSON(offset: error.offset, expected: error.expected)
    }
    // A member given twice counts with its last value.
    try self.init(members: Dictionary(members) { _, last in last })
  }

  /// The request a parsed object describes.
  private init(members: [String: JSONValue]) throws(EncoderRequestError) {
    let request = try Self.string("request", in: members)
    switch request {
    case "bitrate":
      if try Self.bool("restore", in: members, required: false) == true {
        self = .bitrate(nil)
        return
      }
      let bps = try Self.number("target_bps", in: members)
      let range = Self.bitrateRange
      guard bps >= Double(range.lowerBound), bps <= Double(range.upperBound) else {
        throw .outOfRange(member: "target_bps", value: bps, allowed: "10000...200000000")
      }
      self = .bitrate(Int(bps))
    case "frameRate":
      let key = members["target_fps"] == nil && members["fps"] != nil ? "fps" : "target_fps"
      let fps = try Self.number(key, in: members)
      guard fps > 0, fps <= Self.maximumFrameRate else {
        throw .outOfRange(member: key, value: fps, allowed: "(0, 240]")
      }
      self = .frameRate(fps)
    case "mic": self = .mic(try Self.bool("enabled", in: members, required: true)!)
    case "keyframesOnly":
      self = .keyframesOnly(try Self.bool("enabled", in: members, required: true)!)
    case "keyframe": self = .keyframe
    case "profile":
      let name = try Self.string("profile", in: members)
      guard let profile = H264Profile(rawValue: name) else {
        throw .unknownValue(member: "profile", value: name, allowed: "baseline, main or high")
      }
      self = .profile(profile)
    default: throw .unknownRequest(request)
    }
  }

  private static func string(_ key: String, in members: [String: JSONValue])
    throws(EncoderRequestError) -> String
  {
    guard let value = members[key] else { throw .missingMember(key) }
    guard case .string(let string) = value else {
      throw .wrongType(member: key, expected: "a string")
    }
    return string
  }

  private static func number(_ key: String, in members: [String: JSONValue])
    throws(EncoderRequestError) -> Double
  {
    guard let value = members[key] else { throw .missingMember(key) }
    guard case .number(let number) = value else {
      throw .wrongType(member: key, expected: "a number")
    }
    return number
  }

  private static func bool(
    _ key: String, in members: [String: JSONValue], required: Bool
  ) throws(EncoderRequestError) -> Bool? {
    guard let value = members[key] else {
      if required { throw .missingMember(key) }
      return nil
    }
    guard case .bool(let bool) = value else {
      throw .wrongType(member: key, expected: "true or false")
    }
    return bool
  }
}
