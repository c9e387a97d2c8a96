/// What an `AudioMixer` mixes to, and how it treats its inputs' clocks.
public struct AudioMixConfiguration: Sendable {
  /// The mix's rate: the app track's, which both inputs arrive at (resampled before the mixer).
  public var sampleRate: Int
  /// The mix's channels: the app track's.
  public var channels: Int
  /// Samples per mixed frame: an AAC frame.
  public var frameSamples = 1024
  public var gains = AudioMixGains()
  /// How long a frame waits for an input that has not delivered it (paused, late, or bursty)
  /// before it is mixed with that input as silence. Default 250 ms: a burst-delivering mic.
  public var holdbackSamples: Int
  /// An input whose next samples land further than this from where its last ones ended is a
  /// clock reset, not jitter, unless it lands near the timeline's present (a pause). Default 1 s,
  /// the pipeline's `Timeline.jumpThreshold`.
  public var jumpThresholdSamples: Int
  /// The longest pause filled with silence; a larger step forward is a reset. Default 10 s:
  /// the silence is mixed and encoded at once when the input comes back.
  public var longestGapSamples: Int
  /// A step this small, either way, is timestamp jitter: the samples go on where the last
  /// ones ended. Default half a frame.
  public var glitchSamples: Int
  /// The largest run of samples the ring takes in one piece; `push` splits longer ones.
  public var largestChunkSamples = 4096

  /// - Precondition: `sampleRate` and `channels` positive.
  public init(sampleRate: Int, channels: Int, gains: AudioMixGains = AudioMixGains()) {
    precondition(sampleRate > 0 && channels > 0)
    self.sampleRate = sampleRate
    self.channels = channels
    self.gains = gains
    holdbackSamples = sampleRate / 4
    jumpThresholdSamples = sampleRate
    longestGapSamples = 10 * sampleRate
    glitchSamples = frameSamples / 2
  }

  /// Samples each input's ring holds: the wait, the frame being mixed, one more, and a piece.
  public var ringSamples: Int { holdbackSamples + 2 * frameSamples + largestChunkSamples }

  /// The bytes the mixer allocates, for the memory ledger: two input rings and the output
  /// frame, 32-bit float.
  public var bufferBytes: Int {
    (2 * ringSamples + frameSamples) * channels * MemoryLayout<Float>.size
  }
}
