/// The audio an output is asked to carry (`--audio`).
public enum AudioSelection: String, Sendable, CaseIterable {
  /// App and mic decoded, mixed and encoded again as one AAC track.
  case mix
  /// The app track alone.
  case app
  /// The mic track alone.
  case mic
  /// Both tracks as they are, where the output can carry two (not RTMP, which then mixes).
  case both
}
