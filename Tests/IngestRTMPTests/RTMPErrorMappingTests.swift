import Glibc
import IngestCore
import Testing

@testable import IngestRTMP

/// libavformat's errors as the user reads them.
@Suite struct RTMPErrorMappingTests {
  /// RTMPS to a plain RTMP port: the TLS handshake times out, and the message says what the
  /// port probably is. The same timeout over rtmp:// gets no such hint.
  @Test func aTLSHandshakeWithoutAnswerHintsAtAPlainRTMPPort() {
    func reason(_ endpoint: String) -> String {
      let error = RTMPErrorMapping.sinkError(
        code: -ETIMEDOUT, during: .connect, logged: "Error in the pull function.",
        detail: "Connection timed out", endpoint: endpoint)
      guard case .timeout(_, _, let reason) = error else { return "not a timeout: \(error)" }
      return reason
    }
    #expect(reason("rtmps://127.0.0.1:1935/live/***").contains("is this port plain RTMP?"))
    #expect(!reason("rtmp://127.0.0.1:1935/live/***").contains("plain RTMP"))
  }
}
