import IngestCore

/// What a capture delivers, in the order a live capture would: a format before the samples it
/// describes, samples in decode order interleaved by time, events where they happen.
public enum CaptureItem: Sendable {
  case format(SampleKind, FormatDescription)
  case sample(MediaSample)
  case event(DumpEvent)
}

/// Which input stream plays a role.
public enum StreamChoice: Hashable, Sendable {
  /// The default: first video stream; first audio stream for app audio, second for mic audio.
  case automatic
  /// Leave the role out.
  case none
  /// The stream with this index.
  case index(Int)
}
