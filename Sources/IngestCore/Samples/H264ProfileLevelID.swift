/// An H.264 `profile-level-id` (RFC 6184, 8.1): `profile_idc`, the constraint flags byte and
/// `level_idc`, the first three bytes of an SPS after its NAL header (and bytes 1 to 3 of an
/// avcC record). Written as six hex digits in SDP: `42e01f`.
public struct H264ProfileLevelID: Hashable, Sendable, CustomStringConvertible {
  public var profileIDC: UInt8
  public var constraintFlags: UInt8
  public var levelIDC: UInt8

  public init(profileIDC: UInt8, constraintFlags: UInt8, levelIDC: UInt8) {
    self.profileIDC = profileIDC
    self.constraintFlags = constraintFlags
    self.levelIDC = levelIDC
  }

  /// The stream's, from its configuration record.
  public init(_ format: H264Format) {
    self.init(
      profileIDC: format.profile, constraintFlags: format.compatibility, levelIDC: format.level)
  }

  /// Parses six hex digits (either case); nil for anything else.
  public init?(hex: some StringProtocol) {
    let digits = Array(hex.utf8)
    guard digits.count == 6 else { return nil }
    var bytes: [UInt8] = []
    for index in stride(from: 0, to: 6, by: 2) {
      guard let high = Self.nibble(digits[index]), let low = Self.nibble(digits[index + 1]) else {
        return nil
      }
      bytes.append(high << 4 | low)
    }
    self.init(profileIDC: bytes[0], constraintFlags: bytes[1], levelIDC: bytes[2])
  }

  /// Six lower-case hex digits, as SDP writes it.
  public var description: String {
    let digits = Array("0123456789abcdef".utf8)
    let text = [profileIDC, constraintFlags, levelIDC].flatMap {
      [digits[Int($0 >> 4)], digits[Int($0 & 15)]]
    }
    return String(decoding: text, as: UTF8.self)
  }

  /// Which of the profiles a live encoder makes this is, by libwebrtc's table (the one aiortc
  /// and browsers match offers with); nil for another (Baseline without constraint_set1,
  /// Extended, High 10, …).
  public var profile: H264Profile? {
    let flags = constraintFlags
    switch profileIDC {
    case 0x42 where flags & 0x40 != 0 && flags & 0x0F == 0: return .constrainedBaseline
    case 0x4D where flags & 0x80 != 0 && flags & 0x0F == 0: return .constrainedBaseline
    case 0x58 where flags & 0xC0 == 0xC0 && flags & 0x0F == 0: return .constrainedBaseline
    case 0x4D where flags & 0xA0 == 0 && flags & 0x0F == 0: return .main
    case 0x64 where flags == 0: return .high
    default: return nil
    }
  }

  /// The profile's name and the six digits, for messages: `Main (4d401f)`.
  public var displayName: String {
    "\(profile?.displayName ?? "profile_idc \(profileIDC)") (\(description))"
  }

  private static func nibble(_ digit: UInt8) -> UInt8? {
    switch digit {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
    default: nil
    }
  }
}
