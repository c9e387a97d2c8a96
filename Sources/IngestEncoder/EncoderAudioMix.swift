import CFFmpegEncoder
import Foundation
import IngestCore

/// `--mix-audio`: app and mic audio mixed before encoding, as an extension would with
/// `AVAudioMixerNode`, and written as one AAC track (app audio); the dump has no mic track.
/// The same `AudioMixer` as `ingest --audio mix` (gains, limiter, silence for a paused input),
/// on the source's PCM, so nothing is decoded again. The main thread and the `--mic` thread both
/// push here: a lock keeps one at a time.
final class EncoderAudioMix {
  private let lock = NSLock()
  private let mixer: AudioMixer
  /// The app track: its encoder encodes the mix, its clock times it.
  private let track: AudioTrack
  /// The one frame the mix is copied into for the encoder.
  private var frame: UnsafeMutablePointer<AVFrame>?

  init(track: AudioTrack, gains: AudioMixGains) throws(EncoderError) {
    self.track = track
    mixer = AudioMixer(
      configuration: AudioMixConfiguration(
        sampleRate: AudioEncoder.sampleRate, channels: 2, gains: gains))
    frame = av_frame_alloc()
    guard let frame else { throw .codec("audio mix", reason: "out of memory") }
    frame.pointee.nb_samples = Int32(AudioEncoder.frameSize)
    frame.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
    frame.pointee.sample_rate = Int32(AudioEncoder.sampleRate)
    av_channel_layout_default(&frame.pointee.ch_layout, 2)
    try LibAV.check(av_frame_get_buffer(frame, 0), "allocating the audio mix frame")
  }

  deinit { av_frame_free(&frame) }

  /// Mixes one source frame of `role` (planar float at 48 kHz, one or two channels) at media
  /// time `time` (nanoseconds), and encodes the mixed frames that are ready; `write` takes each
  /// AAC frame with its media time and answers whether to go on.
  func push(
    _ role: TrackRole, _ input: UnsafeMutablePointer<AVFrame>, time: Int64, micMuted: Bool,
    write: (UnsafeRawBufferPointer, Int64) throws(EncoderError) -> Bool
  ) throws(EncoderError) -> Bool {
    lock.lock()
    defer { lock.unlock() }
    guard let frame else { return false }
    mixer.isMicMuted = micMuted
    let rate = Int64(AudioEncoder.sampleRate)
    let channels = Int(input.pointee.ch_layout.nb_channels)
    var failure: EncoderError?
    var more = true
    mixer.push(
      role == .micAudio ? .mic : .app, position: time * rate / TimeSpan.nanosecondsPerSecond,
      count: Int(input.pointee.nb_samples),
      samples: { channel in
        // A mono source goes to both channels at its own level.
        UnsafeRawPointer(input.pointee.extended_data[min(channel, channels - 1)]!)
          .assumingMemoryBound(to: Float.self)
      },
      emit: { mixed in
        guard failure == nil, more else { return }
        do throws(EncoderError) {
          try LibAV.check(av_frame_make_writable(frame), "mixing audio")
          for channel in 0..<mixed.channels {
            UnsafeMutableRawPointer(frame.pointee.extended_data[channel]!)
              .assumingMemoryBound(to: Float.self)
              .update(from: mixed.channel(channel).baseAddress!, count: mixed.count)
          }
          // The first mixed frame starts the track's clock; the encoder counts samples on.
          _ = track.nextTime(sourceTime: mixed.position * TimeSpan.nanosecondsPerSecond / rate)
          more = try track.encoder.encode(frame, silent: false) {
            (payload, samples) throws(EncoderError) -> Bool in
            try write(payload, track.time(ofSamples: samples))
          }
          track.countFrame()
        } catch {
          failure = error
        }
      })
    if let failure { throw failure }
    return more
  }
}
