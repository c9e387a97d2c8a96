import Synchronization
import Testing

@testable import IngestCore

/// The run's one voice towards the encoder: outputs' wishes merged, asked once.
@Suite struct RunControlTests {
  /// What reached the encoder.
  final class Encoder: Sendable {
    let requests = Mutex<[EncoderRequest]>([])
    func take(_ request: EncoderRequest) -> Bool {
      requests.withLock { $0.append(request) }
      return true
    }
    var received: [EncoderRequest] { requests.withLock { $0 } }
  }

  /// The steering output (1) cuts to 900 kb/s; the HLS output's ladder (2) asks for 80 % of its
  /// rate, then recovers: the encoder never leaves the cut.
  @Test func aLadderRecoveringDoesNotUndoTheControllersCut() {
    let encoder = Encoder()
    let control = RunControl(outputs: 2, nominalFrameRate: 30, deliver: encoder.take)
    #expect(
      control.wish(.bitrate(900_000), from: 1, now: .origin)
        == .init(request: .bitrate(900_000), delivered: true, output: 1))
    #expect(control.wish(.bitrate(1_600_000), from: 2, now: .at(.nanoseconds(1))) == nil)
    #expect(control.wish(.bitrate(nil), from: 2, now: .at(.nanoseconds(2))) == nil)
    // The ladder's cut below the controller's wins while it holds, and gives way after.
    #expect(control.wish(.bitrate(600_000), from: 2, now: .at(.nanoseconds(3)))?.output == 2)
    #expect(
      control.wish(.bitrate(nil), from: 2, now: .at(.nanoseconds(4)))?.request == .bitrate(900_000))
    #expect(
      control.wish(.bitrate(nil), from: 1, now: .at(.nanoseconds(5)))?.request == .bitrate(nil))
    #expect(
      encoder.received == [.bitrate(900_000), .bitrate(600_000), .bitrate(900_000), .bitrate(nil)])
  }

  @Test func frameRateIsTheLowestWishedAndRestoredToNominal() {
    let encoder = Encoder()
    let control = RunControl(outputs: 3, nominalFrameRate: 30, deliver: encoder.take)
    #expect(control.wish(.frameRate(15), from: 3, now: .origin)?.output == 3)
    #expect(control.wish(.frameRate(20), from: 1, now: .origin) == nil)
    #expect(control.wish(.frameRate(30), from: 3, now: .origin)?.request == .frameRate(20))
    #expect(control.wish(.frameRate(30), from: 1, now: .origin)?.request == .frameRate(30))
    #expect(encoder.received == [.frameRate(15), .frameRate(20), .frameRate(30)])
  }

  @Test func micStaysOffAndKeyframesOnlyStayOnWhileAnyOutputWantsIt() {
    let encoder = Encoder()
    let control = RunControl(outputs: 2, nominalFrameRate: 30, deliver: encoder.take)
    #expect(control.wish(.mic(false), from: 1, now: .origin)?.request == .mic(false))
    #expect(control.wish(.mic(false), from: 2, now: .origin) == nil)
    #expect(control.wish(.mic(true), from: 1, now: .origin) == nil)
    #expect(control.wish(.mic(true), from: 2, now: .origin)?.request == .mic(true))
    #expect(control.wish(.keyframesOnly(true), from: 2, now: .origin)?.output == 2)
    #expect(control.wish(.keyframesOnly(false), from: 1, now: .origin) == nil)
    #expect(encoder.received == [.mic(false), .mic(true), .keyframesOnly(true)])
  }

  /// Keyframe wishes from several outputs after one event make one IDR; a later one another.
  @Test func keyframesAreDeduplicated() {
    let encoder = Encoder()
    let control = RunControl(outputs: 2, nominalFrameRate: 30, deliver: encoder.take)
    #expect(control.wish(.keyframe, from: 1, now: .at(.seconds(1)))?.output == 1)
    #expect(control.wish(.keyframe, from: 2, now: .at(.milliseconds(1100))) == nil)
    #expect(control.wish(.keyframe, from: 2, now: .at(.milliseconds(1600)))?.output == 2)
    #expect(encoder.received == [.keyframe, .keyframe])
  }

  /// Without an encoder (a dump replayed) requests count as delivered.
  @Test func withoutAnEncoderRequestsCountAsDelivered() {
    let control = RunControl(outputs: 1, nominalFrameRate: 30, deliver: nil)
    #expect(control.wish(.mic(false), from: 1, now: .origin)?.delivered == true)
  }

  /// The H.264 profile two WHIP outputs negotiated: the first passes through, the most
  /// constrained wins, and a repeated wish asks nothing.
  @Test func theMostConstrainedProfileWins() {
    let encoder = Encoder()
    let control = RunControl(outputs: 3, nominalFrameRate: 30, deliver: encoder.take)
    #expect(
      control.wish(.profile(.main), from: 2, now: .origin)
        == .init(request: .profile(.main), delivered: true, output: 2))
    #expect(control.wish(.profile(.main), from: 2, now: .at(.nanoseconds(1))) == nil)
    // A receiver that negotiated High decodes the Main stream: nothing changes.
    #expect(control.wish(.profile(.high), from: 1, now: .at(.nanoseconds(2))) == nil)
    // One that takes Constrained Baseline only holds every output there.
    #expect(
      control.wish(.profile(.constrainedBaseline), from: 3, now: .at(.nanoseconds(3)))?.output == 3)
    #expect(control.wish(.profile(.high), from: 2, now: .at(.nanoseconds(4))) == nil)
    #expect(encoder.received == [.profile(.main), .profile(.constrainedBaseline)])
  }
}
