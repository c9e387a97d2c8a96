/// One mixed frame, lent to the caller of `AudioMixer.push` or `finish` for the length of the
/// call: `channels` planes of `count` samples in the mixer's own buffer.
public struct AudioMixFrame {
  /// The first sample's place on the mix timeline, in samples at the mix rate (the inputs'
  /// timestamps, as given to `push`).
  public let position: Int64
  public let channels: Int
  public let count: Int
  private let samples: UnsafeBufferPointer<Float>

  init(position: Int64, channels: Int, count: Int, samples: UnsafeBufferPointer<Float>) {
    self.position = position
    self.channels = channels
    self.count = count
    self.samples = samples
  }

  /// The samples of `channel`, valid until the call that lent the frame returns.
  public func channel(_ channel: Int) -> UnsafeBufferPointer<Float> {
    precondition(channel >= 0 && channel < channels)
    return UnsafeBufferPointer(rebasing: samples[channel * count..<(channel + 1) * count])
  }
}
