/// How an SRT connection is made (the URL's `mode=`, named as srt-live-transmit names them).
public enum SRTMode: String, Sendable, Equatable, CaseIterable {
  /// Connect out to a listener at the URL's host and port (the default).
  case caller
  /// Bind the URL's host and port and wait for a caller (OBS, srt-live-transmit, a player) to
  /// connect; after a caller leaves, wait for the next one.
  case listener
  /// Both ends bind and connect to each other at once (`port=` is the local port, the URL's
  /// port by default), for peers behind NATs that cannot take incoming connections.
  case rendezvous
}
