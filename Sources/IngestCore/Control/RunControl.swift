import Synchronization

/// The one voice of a run towards its encoder. Every output's `ControlLoop` hands it what that
/// output wishes (its rate controller's decisions, its ladder's requests, its receiver's keyframe
/// requests); it merges the wishes and asks the encoder only when the merged request changes:
///
/// - bitrate and frame rate: the lowest any output wishes (an output that restores, `nil` or
///   the nominal frame rate, no longer holds the encoder down; the others still do);
/// - mic off while any output wants it off; keyframes only while any output wants them;
/// - a keyframe once for the wishes that arrive within `keyframeInterval` of it;
/// - the H.264 profile: the most constrained any output negotiated (see `wish`).
///
/// So one output's ladder recovering (`.bitrate(nil)`) never undoes the steering output's rate
/// cut, and several outputs' keyframe requests after one event make one IDR. Called from every
/// output's sender thread: the state sits behind a mutex, and `deliver` is called under it, so
/// the encoder gets the merged requests in the order they were decided.
public final class RunControl: Sendable {
  /// What the encoder was asked for, and whose wish decided it.
  public struct Decision: Sendable, Equatable {
    /// The request handed to the encoder.
    public var request: EncoderRequest
    /// False when the encoder's input refused it (full or gone).
    public var delivered: Bool
    /// The output (from 1) whose wish the request carries out.
    public var output: Int
  }

  /// Keyframe wishes this close to a delivered keyframe are served by it.
  public static let keyframeInterval: TimeSpan = .milliseconds(500)

  private struct State {
    var bitrate: [Int?]
    var frameRate: [Double?]
    var micOff: [Bool]
    var keyframesOnly: [Bool]
    var profile: [H264Profile?]
    /// What the encoder was last asked for, merged.
    var askedBitrate: Int?
    var askedFrameRate: Double?
    var askedMicOff = false
    var askedKeyframesOnly = false
    var askedProfile: H264Profile?
    var lastKeyframe: MonotonicInstant?
  }

  private let state: Mutex<State>
  private let nominalFrameRate: Double
  private let deliver: (@Sendable (EncoderRequest) -> Bool)?

  /// - Parameters:
  ///   - outputs: how many outputs wish (numbered from 1).
  ///   - nominalFrameRate: the encoder's own frame rate: a wish at or above it is no cap.
  ///   - deliver: hands a request to the encoder, answering whether it got there; nil when
  ///     there is no encoder (a dump replayed): requests then count as delivered.
  public init(
    outputs: Int, nominalFrameRate: Int, deliver: (@Sendable (EncoderRequest) -> Bool)?
  ) {
    let count = max(outputs, 1)
    state = Mutex(
      State(
        bitrate: Array(repeating: nil, count: count),
        frameRate: Array(repeating: nil, count: count),
        micOff: Array(repeating: false, count: count),
        keyframesOnly: Array(repeating: false, count: count),
        profile: Array(repeating: nil, count: count)))
    self.nominalFrameRate = Double(nominalFrameRate)
    self.deliver = deliver
  }

  /// Output `output` (from 1) wishes `request` at `now` (on the run's clock).
  /// - Returns: what the encoder was asked for because of it, or nil when the merged request
  ///   did not change (another output holds the encoder lower, or nothing new was asked).
  public func wish(_ request: EncoderRequest, from output: Int, now: MonotonicInstant) -> Decision?
  {
    state.withLock { state -> Decision? in
      let slot = min(max(output - 1, 0), state.bitrate.count - 1)
      switch request {
      case .bitrate(let bps):
        state.bitrate[slot] = bps
        let (merged, winner) = Self.lowest(state.bitrate)
        guard merged != state.askedBitrate else { return nil }
        state.askedBitrate = merged
        return ask(.bitrate(merged), output: winner ?? output)
      case .frameRate(let fps):
        state.frameRate[slot] = fps >= nominalFrameRate ? nil : fps
        let (merged, winner) = Self.lowest(state.frameRate)
        guard merged != state.askedFrameRate else { return nil }
        state.askedFrameRate = merged
        return ask(.frameRate(merged ?? nominalFrameRate), output: winner ?? output)
      case .mic(let enabled):
        state.micOff[slot] = !enabled
        let off = state.micOff.contains(true)
        guard off != state.askedMicOff else { return nil }
        state.askedMicOff = off
        return ask(.mic(!off), output: state.micOff.firstIndex(of: true).map { $0 + 1 } ?? output)
      case .keyframesOnly(let enabled):
        state.keyframesOnly[slot] = enabled
        let on = state.keyframesOnly.contains(true)
        guard on != state.askedKeyframesOnly else { return nil }
        state.askedKeyframesOnly = on
        return ask(
          .keyframesOnly(on),
          output: state.keyframesOnly.firstIndex(of: true).map { $0 + 1 } ?? output)
      case .profile(let profile):
        // Two outputs that negotiated different profiles (two WHIP endpoints) get the most
        // constrained of them: a Constrained Baseline stream decodes on a receiver that
        // negotiated Main or High, a High one only where High was negotiated. So the first
        // wish passes through as it is, and a later, less constrained one changes nothing.
        state.profile[slot] = profile
        let merged = state.profile.compactMap { $0 }.min()
        guard let merged, merged != state.askedProfile else { return nil }
        state.askedProfile = merged
        let winner = state.profile.firstIndex(of: merged).map { $0 + 1 } ?? output
        return ask(.profile(merged), output: winner)
      case .keyframe:
        if let last = state.lastKeyframe, now - last < Self.keyframeInterval, now >= last {
          return nil
        }
        state.lastKeyframe = now
        return ask(.keyframe, output: output)
      }
    }
  }

  private func ask(_ request: EncoderRequest, output: Int) -> Decision {
    Decision(request: request, delivered: deliver?(request) ?? true, output: output)
  }

  /// The lowest value wished and the output (from 1) that wished it; nil when none holds.
  private static func lowest<Value: Comparable>(_ wishes: [Value?]) -> (Value?, Int?) {
    var best: (Value, Int)?
    for (index, wish) in wishes.enumerated() {
      guard let wish else { continue }
      if best.map({ wish < $0.0 }) ?? true { best = (wish, index + 1) }
    }
    return (best?.0, best?.1)
  }
}
