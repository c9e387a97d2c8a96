import Testing

@testable import IngestWHIP

/// The lines ingest-whip writes, as the pipeline process reads them.
@Suite struct WHIPEventTests {
  @Test func aStatsLineGivesEveryFigure() {
    let line =
      #"{"event":"stats","bytes_sent":1334762,"packets_sent":1432,"packets_lost":3,"#
      + #""fraction_lost":0.0117,"jitter_ms":1.25,"rtt_ms":3.05,"nack":2,"pli":1,"fir":0,"#
      + #""queue_bytes":30401,"dropped_before_connection":126,"keyframe_requests":1,"#
      + #""remb_bps":1500000,"twcc_feedback":90,"twcc_packets_reported":574,"#
      + #""twcc_packets_lost":12,"twcc_received_bps":403595,"twcc_loss":0.0102,"#
      + #""twcc_queue_ms":0.5,"twcc_gradient":-0.57}"#
    guard case .stats(let statistics)? = WHIPEvent(line: line) else {
      Issue.record("not a stats event")
      return
    }
    #expect(statistics.bytesSent == 1_334_762)
    #expect(statistics.packetsSent == 1432)
    #expect(statistics.packetsLost == 3)
    #expect(statistics.fractionLost == 0.0117)
    #expect(statistics.jitterMilliseconds == 1.25)
    #expect(statistics.roundTripMilliseconds == 3.05)
    #expect(statistics.nackCount == 2)
    #expect(statistics.pliCount == 1)
    #expect(statistics.queueBytes == 30401)
    #expect(statistics.droppedBeforeConnection == 126)
    #expect(statistics.keyframeRequests == 1)
    #expect(statistics.receiverEstimateBitsPerSecond == 1_500_000)
    #expect(statistics.transportFeedbackCount == 90)
    #expect(statistics.transportPacketsReported == 574)
    #expect(statistics.transportPacketsLost == 12)
    #expect(statistics.transportReceivedBitsPerSecond == 403_595)
    #expect(statistics.transportLoss == 0.0102)
    #expect(statistics.transportQueueMilliseconds == 0.5)
    #expect(statistics.transportDelayGradient == -0.57)
  }

  @Test func figuresTheReceiverHasNotReportedStayNil() {
    guard case .stats(let statistics)? = WHIPEvent(line: #"{"event":"stats","bytes_sent":10}"#)
    else {
      Issue.record("not a stats event")
      return
    }
    #expect(statistics.fractionLost == nil)
    #expect(statistics.roundTripMilliseconds == nil)
    #expect(statistics.transportReceivedBitsPerSecond == nil)
    #expect(statistics.transportQueueMilliseconds == nil)
  }

  @Test func statesKeyframesDeletionsAndErrors() {
    #expect(WHIPEvent(line: #"{"event":"ice","state":"connected"}"#) == .ice("connected"))
    #expect(
      WHIPEvent(line: #"{"event":"connection","state":"failed"}"#) == .connection("failed"))
    #expect(WHIPEvent(line: #"{"event":"keyframe"}"#) == .keyframe(unserved: false))
    #expect(
      WHIPEvent(line: #"{"event":"keyframe","cause":"unserved"}"#) == .keyframe(unserved: true))
    #expect(
      WHIPEvent(line: #"{"event":"deleted","status":200}"#) == .deleted(status: 200, error: nil))
    #expect(
      WHIPEvent(
        line: #"{"event":"error","name":"rejected","message":"HTTP 401","retryable":false}"#)
        == .error(name: "rejected", message: "HTTP 401", retryable: false))
    #expect(
      WHIPEvent(line: #"{"event":"candidates","mdns":2,"resolved":1}"#)
        == .candidates(mdns: 2, resolved: 1))
  }

  @Test func unknownAndMalformedLinesAreSkipped() {
    #expect(WHIPEvent(line: #"{"event":"future-thing"}"#) == nil)
    #expect(WHIPEvent(line: "not json") == nil)
    #expect(WHIPEvent(line: #"{"no_event":1}"#) == nil)
  }

  @Test func aNegotiatedLineNamesTheChosenProfile() {
    let line =
      #"{"event":"negotiated","codec":"H264","payload_type":98,"profile_level_id":"42e01f","#
      + #""profile":"baseline"}"#
    #expect(
      WHIPEvent(line: line)
        == .negotiated(
          codec: "H264", payloadType: 98, profileLevelID: "42e01f", profile: .constrainedBaseline))
    #expect(
      WHIPEvent(line: #"{"event":"negotiated","codec":"H265","payload_type":96}"#)
        == .negotiated(codec: "H265", payloadType: 96, profileLevelID: nil, profile: nil))
  }
}
