import IngestCore

/// The latency of a connection against its round trip, checked at connect and again during the
/// run (`RunLatencyCheck`): SRT recovers a lost packet only if its retransmission arrives
/// within the latency, so a latency under about three round trips turns every loss into a hole
/// in the picture. The SRT deployment guide advises four round trips, and at least 120 ms;
/// `latency=auto` picks that.
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
  /// Whether the round trip was measured during the run (the path's, after connect) rather
  /// than at connect.
  var duringRun = false

  /// max(120 ms, 4 × RTT), rounded up to 10 ms.
  static func automaticLatency(roundTripMilliseconds: Double) -> Int {
    let fourTrips = Int((4 * roundTripMilliseconds / 10).rounded(.up)) * 10
    return max(automaticFloorMilliseconds, fourTrips)
  }

  /// Which end's latency applies.
  var appliedBy: String {
    agreedMilliseconds > askedMilliseconds ? "receiver" : "sender"
  }

  /// What `latency=auto` would ask for on the next connection, at the round trip measured.
  var reconnectMilliseconds: Int? {
    roundTripMilliseconds.flatMap {
      $0 > 0 ? Self.automaticLatency(roundTripMilliseconds: $0) : nil
    }
  }

  /// The warning for a latency too short for the path, or nil.
  var warning: String? {
    guard let rtt = roundTripMilliseconds, rtt > 0,
      Double(agreedMilliseconds) < Self.warningRoundTrips * rtt
    else { return nil }
    let advised = Self.automaticLatency(roundTripMilliseconds: rtt)
    let measured = duringRun ? "the path's, measured during the run" : "measured at connect"
    let advice =
      automatic && duringRun
      ? "latency=auto would ask for \(advised) ms on a reconnect"
      : "use latency=auto or at least \(advised) ms"
    return "SRT latency \(agreedMilliseconds) ms (the \(appliedBy)'s) is under 3 round trips "
      + "(\(JSONObject.fixed(rtt, decimals: 0)) ms \(measured)): a lost packet cannot "
      + "be sent again in time; \(advice)"
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
    if duringRun { object.add("during_run", true) }
    if automatic, duringRun, warning != nil, let reconnectMilliseconds {
      object.add("reconnect_ms", reconnectMilliseconds)
    }
    if let warning { object.add("warning", warning) }
    return object
  }
}

/// When the latency check during a run is due: at most twice a second, and only for news. A
/// warning when the path's round trip first makes the latency shorter than three round trips;
/// another only when the round trip grew by a quarter since the last one, or after it came
/// back under the latency's 3.5th part (re-armed), so a path that stays long warns once.
struct RunLatencyCheck {
  /// Least time between two checks.
  static let interval: TimeSpan = .milliseconds(500)
  /// A round trip this much longer than the last one warned about warns again.
  static let growthToWarnAgain = 1.25
  /// Round trips in the latency that re-arm the warning.
  static let rearmRoundTrips = 3.5

  private var nextCheck: MonotonicInstant = .distantPast
  /// The round trip of the last warning; nil when none stands.
  private(set) var warnedRoundTripMilliseconds: Double?

  /// Records a warning given at `roundTripMilliseconds` (at connect, or by this check).
  mutating func warned(roundTripMilliseconds: Double) {
    warnedRoundTripMilliseconds = roundTripMilliseconds
  }

  /// Whether a warning is due at `now` for the path's round trip against the latency.
  mutating func isDue(
    now: MonotonicInstant, roundTripMilliseconds rtt: Double, latencyMilliseconds: Int
  )
    -> Bool
  {
    guard now >= nextCheck else { return false }
    nextCheck = now + Self.interval
    let latency = Double(latencyMilliseconds)
    if let warned = warnedRoundTripMilliseconds, latency >= Self.rearmRoundTrips * rtt,
      rtt < warned
    {
      warnedRoundTripMilliseconds = nil
    }
    guard latency < SRTLatencyCheck.warningRoundTrips * rtt else { return false }
    guard let warned = warnedRoundTripMilliseconds else { return true }
    return rtt >= Self.growthToWarnAgain * warned
  }
}
