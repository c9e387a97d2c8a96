/// Keeps a mixed frame under `ceiling`, whatever the gains summed to.
///
/// The gain follows the frame's peak: down to what the frame needs at once (ramped across the
/// frame, so that a level change is no click), and back toward unity by `release` of the way per
/// frame once the peaks are gone. Where the ramp is still above what a sample needs (the first
/// samples of a loud frame), that sample alone is held at the ceiling: the guarantee that
/// nothing clips costs at most a brief hard knee on a sudden peak, never a wrapped sample.
public struct PeakLimiter: Sendable {
  /// The largest magnitude that leaves the limiter (0.98, about -0.2 dBFS: an AAC encoder's
  /// reconstruction of a full-scale wave overshoots a little).
  public let ceiling: Float
  /// The share of the distance back to unity gain recovered per frame (0.05 a 1024-sample frame
  /// at 48 kHz: about 0.4 s to recover).
  public let release: Float
  /// The gain at the end of the last frame.
  public private(set) var gain: Float = 1
  /// Frames whose gain was below unity.
  public private(set) var limitedFrames = 0

  /// - Precondition: `ceiling` in 0<...1, `release` in 0<...1.
  public init(ceiling: Float = 0.98, release: Float = 0.05) {
    precondition(ceiling > 0 && ceiling <= 1 && release > 0 && release <= 1)
    self.ceiling = ceiling
    self.release = release
  }

  /// Scales `samples` in place: `channels` planes of `count` samples each, one after the other.
  /// Not a finite number becomes silence. Complexity: O(channels × count), no allocation.
  public mutating func process(
    _ samples: UnsafeMutableBufferPointer<Float>, channels: Int, count: Int
  ) {
    precondition(samples.count >= channels * count && count > 0)
    var peak: Float = 0
    for index in 0..<channels * count {
      let magnitude = abs(samples[index])
      if magnitude.isFinite && magnitude > peak { peak = magnitude }
    }
    let required = peak > ceiling ? ceiling / peak : 1
    let target = required < gain ? required : min(required, gain + (1 - gain) * release)
    let start = gain
    let step = (target - start) / Float(count)
    for channel in 0..<channels {
      let base = channel * count
      for offset in 0..<count {
        let value = samples[base + offset] * (start + step * Float(offset + 1))
        if !value.isFinite {
          samples[base + offset] = 0
        } else if abs(value) > ceiling {
          samples[base + offset] = value < 0 ? -ceiling : ceiling
        } else {
          samples[base + offset] = value
        }
      }
    }
    gain = target
    if target < 1 { limitedFrames += 1 }
  }
}
