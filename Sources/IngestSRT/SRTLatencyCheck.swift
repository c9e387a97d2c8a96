import IngestCore

/// The latency of a connection against its round trip, checked once at connect: SRT recovers
/// a lost packet only if its retransmission arrives within the latency, so a latency under
/// about three round trips turns every loss into a hole in the picture. The SRT deployment
/// guide advises four round trips, and at least 120 ms; `latency=auto` picks that.
///
/// The receiver delivers each packet at the larger of the two latencies the ends asked for,
/// so the check is made on the agreed one and says which end set it.
struct SRTLatencyCheck {
  /// The least latency `auto` picks (libsrt's default).
  static let automaticFloorMilliseconds = 120
  /// Below this many round trips, the run warns.
  static let warningRoundTrips = 3.0

  var askedMilliseconds: Int
  var agreedMilliseconds: Int
  var automatic: Bool
  var roundTripMilliseconds: Double?
  /// How the round trip was measured: `probe` (an induction before connecting), `handshake`
  /// (half the caller's connect time) or `libsrt` (its own figure once data flowed, when the
  /// handshake took long enough to include a wait for the listener).
  var roundTripSource: String?

  /// max(120 ms, 4 × RTT), rounded up to 10 ms.
  static func automaticLatency(roundTripMilliseconds: Double) -> Int {
    let fourTrips = Int((4 * roundTripMilliseconds / 10).rounded(.up)) * 10
    return max(automaticFloorMilliseconds, fourTrips)
  }

  /// Which end's latency applies.
  var appliedBy: String {
    agreedMilliseconds > askedMilliseconds ? "receiver" : "sender"
  }

  /// The warning for a latency too short for the path, or nil.
  var warning: String? {
    guard let rtt = roundTripMilliseconds, rtt > 0,
      Double(agreedMilliseconds) < Self.warningRoundTrips * rtt
    else { return nil }
    let advised = Self.automaticLatency(roundTripMilliseconds: rtt)
    return "SRT latency \(agreedMilliseconds) ms (the \(appliedBy)'s) is under 3 round trips "
      + "(\(JSONObject.fixed(rtt, decimals: 0)) ms measured at connect): a lost packet cannot "
      + "be sent again in time; use latency=auto or at least \(advised) ms"
  }

  /// The `latency` status event's fields.
  var statusObject: JSONObject {
    var object = JSONObject()
    object.add("latency_ms", agreedMilliseconds)
    object.add("asked_ms", askedMilliseconds)
    object.add("applies", appliedBy)
    object.add("auto", automatic)
    if let roundTripMilliseconds {
      object.add("rtt_ms", roundTripMilliseconds, decimals: 1)
      object.add("rtt_source", roundTripSource ?? "handshake")
    }
    if let warning { object.add("warning", warning) }
    return object
  }
}
