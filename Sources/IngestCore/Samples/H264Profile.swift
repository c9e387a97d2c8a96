/// An H.264 profile a live encoder can be asked for and a WebRTC offer can list: the three that
/// libx264 makes and WebRTC receivers name (RFC 6184's `profile-level-id`, as libwebrtc and
/// aiortc classify it).
///
/// Ordered from the most constrained: a stream in one profile decodes on a receiver that
/// negotiated any profile after it (Constrained Baseline within Main within High), never the
/// other way round (`fits(within:)`).
public enum H264Profile: String, CaseIterable, Comparable, Sendable {
  /// Constrained Baseline: no B-frames, no CABAC; what every WebRTC receiver takes.
  case constrainedBaseline = "baseline"
  /// Main.
  case main
  /// High (x264's default for 8-bit 4:2:0).
  case high

  /// The order the offer lists them in when nothing else is asked for: High first, as the
  /// best picture for its bit rate.
  public static let defaultPreference: [H264Profile] = [.high, .main, .constrainedBaseline]

  /// The profile's name in messages: `Constrained Baseline`, `Main`, `High`.
  public var displayName: String {
    switch self {
    case .constrainedBaseline: "Constrained Baseline"
    case .main: "Main"
    case .high: "High"
    }
  }

  /// `profile_idc` of its SPS.
  public var profileIDC: UInt8 {
    switch self {
    case .constrainedBaseline: 0x42
    case .main: 0x4D
    case .high: 0x64
    }
  }

  /// The constraint flags byte (`constraint_set0..5_flag`) libx264 writes for it, and the
  /// offer names: set0 and set1 for Constrained Baseline, set1 for Main, none for High.
  public var constraintFlags: UInt8 {
    switch self {
    case .constrainedBaseline: 0xE0
    case .main: 0x40
    case .high: 0x00
    }
  }

  /// Whether a stream in this profile decodes on a receiver that negotiated `negotiated`.
  public func fits(within negotiated: H264Profile) -> Bool { self <= negotiated }

  /// Its `profile-level-id` at `level` (level_idc, 31 for 3.1): six hex digits, `42e01f`.
  public func profileLevelID(level: UInt8) -> H264ProfileLevelID {
    H264ProfileLevelID(profileIDC: profileIDC, constraintFlags: constraintFlags, levelIDC: level)
  }

  /// Reads a name as the `profiles=` option and `--profile` take it: `baseline` (or
  /// `constrained-baseline`), `main`, `high`; nil for anything else.
  public init?(name: some StringProtocol) {
    switch name.lowercased() {
    case "baseline", "constrained-baseline", "cb": self = .constrainedBaseline
    case "main": self = .main
    case "high": self = .high
    default: return nil
    }
  }

  private var rank: Int {
    switch self {
    case .constrainedBaseline: 0
    case .main: 1
    case .high: 2
    }
  }

  public static func < (lhs: H264Profile, rhs: H264Profile) -> Bool { lhs.rank < rhs.rank }
}
