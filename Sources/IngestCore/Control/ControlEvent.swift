/// What the control loop saw and did, in order, for the status channel (`StatusReporter` in a
/// run turns each into a JSON line).
public enum ControlEvent: Sendable, Equatable {
  /// Something the pipeline noticed (tier changes among them), in the order it was queued.
  case pipeline(PipelineEvent)
  /// The rate controller changed what it asks for; its requests follow as `encoderRequest`.
  case rate(RateController.Decision)
  /// A request handed to the encoder, once each: `delivered` is false when the encoder's input
  /// refused it (its pipe full or closed), so a request never reads as sent when it was not.
  case encoderRequest(EncoderRequest, delivered: Bool)
  /// What the run's `RunControl` asked the encoder for when this output's wish changed the
  /// merged request, naming the output whose wish it carries out.
  case runDecision(RunControl.Decision)
}
