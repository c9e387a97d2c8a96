/// Where the control loop reads an output's link: every `OutputSink` is one (SRT from libsrt's
/// statistics, RTMP from its socket), and so is anything a host measures a link with.
public protocol LinkEstimateSource: AnyObject {
  /// A congestion signal in 0...1 (0: idle link, 1: the output's own buffer is full); the
  /// degradation ladder may raise the tier on it before memory does, when no rate controller
  /// steers the encoder.
  var congestion: Double { get }
  /// The link as the output measures it now, for the rate controller; nil when the output has
  /// no link (files) or is not connected. Called from the thread that ticks the control loop,
  /// a few times a second.
  func linkEstimate(now: MonotonicInstant) -> LinkEstimate?
  /// Whether the receiver asked for a keyframe since the last call (WHIP: a PLI or FIR), which
  /// the control loop passes to the encoder as `EncoderRequest.keyframe`. Called with the
  /// link's reading; a source whose receiver cannot ask answers false.
  func takeKeyframeRequest(now: MonotonicInstant) -> Bool
  /// The H.264 profile the receiver negotiated, once, when it became known since the last call
  /// (WHIP: the profile the SDP answer chose), which the control loop passes to the encoder as
  /// `EncoderRequest.profile`; nil otherwise, and always for a source that negotiates none.
  func takeProfileRequest() -> H264Profile?
}

extension LinkEstimateSource {
  public func takeKeyframeRequest(now: MonotonicInstant) -> Bool { false }
  public func takeProfileRequest() -> H264Profile? { nil }
}
