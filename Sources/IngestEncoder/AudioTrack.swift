import CFFmpegEncoder
import IngestCore

/// One audio track of the dump (app or mic): its encoder, its clock and what the mic switch was
/// when its last frame was encoded. Used by one thread only.
final class AudioTrack {
  let role: TrackRole
  let encoder: AudioEncoder
  /// The media time of the track's first frame; the track's clock counts samples from there.
  private var start: Int64?
  /// Frames encoded so far (the index of the next one).
  private(set) var frames = 0
  /// Whether the last frame was real mic audio (true) or silence (false).
  var lastEnabled = true

  init(role: TrackRole, channels: Int, bitrate: Int) throws(EncoderError) {
    self.role = role
    encoder = try AudioEncoder(channels: channels, bitrate: bitrate)
  }

  /// The media time of the next frame, in nanoseconds, given the source's time of it.
  func nextTime(sourceTime: Int64) -> Int64 {
    let start = self.start ?? sourceTime
    self.start = start
    return start + encoder.samples * TimeSpan.nanosecondsPerSecond / Int64(AudioEncoder.sampleRate)
  }

  /// Converts an encoder timestamp (samples) to media nanoseconds.
  func time(ofSamples samples: Int64) -> Int64 {
    (start ?? 0) + samples * TimeSpan.nanosecondsPerSecond / Int64(AudioEncoder.sampleRate)
  }

  /// Counts an encoded frame.
  func countFrame() { frames += 1 }
}
