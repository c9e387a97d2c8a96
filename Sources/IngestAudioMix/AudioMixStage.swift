import CFFmpeg
import IngestCore

/// App and mic audio made one AAC track: each input decoded (libavcodec) and brought to the app
/// track's rate and channels (libswresample), mixed by `AudioMixer` (gains, limiter, silence
/// for a paused input, each input's own clock), and encoded again as AAC-LC.
///
/// ```
/// app AAC ─► AACTrackDecoder ─┐
///                             ├─► AudioMixer ─► AACFrameEncoder ─► mixed AAC (as audioApp)
/// mic AAC ─► AACTrackDecoder ─┘   (1024-sample frames on the inputs' timeline)
/// ```
///
/// libavcodec is loaded (`dlopen`) when the first stage is made, so a run that does not mix
/// never maps it. One thread calls every method: in a run, the mix's own (`AudioMixWorker`). After `init`, a frame's way through allocates
/// nothing of its own; inside libavcodec a mixed frame costs 14 small allocations in steady state
/// (five per input frame decoded, four per frame encoded: references to buffers that are reused,
/// and libavcodec's own bookkeeping), the fewest its API allows (`AACTrackDecoder`,
/// `AACFrameEncoder`).
public final class AudioMixStage {
  /// The mixed track's format: AAC-LC at the app track's rate and channels.
  public let format: AACFormat
  /// The gains the inputs are mixed at.
  public let gains: AudioMixGains
  /// The bytes the stage holds, for the memory ledger: the mixer's buffers, the decoders'
  /// output buffers, the codecs' state (`codecStateBytes`) and the queues to and from the
  /// mix's thread (`handOff`).
  public let ledgerBytes: Int
  /// The sizes of the queues between the capture thread and the mix's thread.
  public let handOff: AudioMixHandOff
  private let mixer: AudioMixer
  private var decoders: [AACTrackDecoder]
  private let encoder: AACFrameEncoder
  /// The first mixed frame's position: encoder output before it is its priming, dropped.
  private var firstPosition: Int64?
  /// Frames that could not be decoded or encoded.
  public private(set) var failedFrames = 0
  /// The first error met, for the summary.
  public private(set) var firstError: AudioMixStageError?
  /// Mixed frames encoded and handed on.
  public private(set) var encodedFrames = 0

  /// What two AAC decoders, the AAC encoder and the resamplers hold in libavcodec's heap: the
  /// footprint a mixing RTMP run adds to one that sends the app track alone (3.3 MB, where
  /// libavformat had mapped libavcodec already), less the mixer's own buffers, rounded
  /// (docs/benchmarks.md, "Audio mix"). libavcodec's own dirty library pages, which a run to a
  /// file or HLS maps for the mix alone, are not charged, like libavformat's for RTMP; the
  /// ladder still sees them in the footprint.
  public static let codecStateBytes = 3_000_000

  /// The AAC bitrate of the mixed track: what `ingest-encode` gives each track.
  public static let bitrate = 128_000

  /// Nil once libavcodec is loaded, else a message saying what is missing.
  public static var loadError: String? {
    guard cffmpeg_codec_load() == 0 else { return nil }
    return LibraryLoadFailure.message(
      soname: String(cString: cffmpeg_codec_soname()),
      reason: String(cString: cffmpeg_load_error()),
      install: "install libavcodec59 (apt-get install ffmpeg)")
  }

  /// What a stage for these tracks enters in the ledger (`ledgerBytes`), known without loading
  /// libavcodec: the mixer's buffers, each decoder's output buffer, `codecStateBytes` and the
  /// queues to and from the mix's thread (`AudioMixHandOff`).
  public static func ledgerBytes(app: AACFormat, mic: AACFormat) -> Int {
    let configuration = AudioMixConfiguration(sampleRate: app.sampleRate, channels: app.channels)
    let decoders = [app, mic].reduce(0) { bytes, format in
      bytes + AACTrackDecoder.capacity(format: format, mixRate: app.sampleRate) * app.channels
        * MemoryLayout<Float>.size
    }
    return configuration.bufferBytes + decoders + codecStateBytes
      + AudioMixHandOff(app: app, mic: mic).bytes
  }

  /// Loads libavcodec and opens both decoders and the encoder.
  /// - Throws: `AudioMixStageError` naming what is missing or what failed to open.
  public init(app: AACFormat, mic: AACFormat, gains: AudioMixGains) throws(AudioMixStageError) {
    if let message = Self.loadError { throw .libraryUnavailable(message) }
    // Errors only: the summary and status events say what the mix did.
    cffmpeg_codec_av_log_set_level(cffmpeg_log_error_level())
    let rate = app.sampleRate
    let channels = app.channels
    encoder = try AACFrameEncoder(sampleRate: rate, channels: channels, bitrate: Self.bitrate)
    format = encoder.format
    decoders = [
      try AACTrackDecoder(format: app, mixRate: rate, mixChannels: channels),
      try AACTrackDecoder(format: mic, mixRate: rate, mixChannels: channels),
    ]
    self.gains = gains
    let configuration = AudioMixConfiguration(sampleRate: rate, channels: channels, gains: gains)
    mixer = AudioMixer(configuration: configuration)
    ledgerBytes = Self.ledgerBytes(app: app, mic: mic)
    handOff = AudioMixHandOff(app: app, mic: mic)
  }

  /// Whether the mic is left out of the mix (the ladder's mic tier).
  public var isMicMuted: Bool {
    get { mixer.isMicMuted }
    set { mixer.isMicMuted = newValue }
  }

  /// Mixed frames the limiter turned down.
  public var limitedFrames: Int { mixer.limitedFrames }

  /// Times the clock of `kind`'s input was found reset (and that input alone re-anchored).
  public func resets(of kind: SampleKind) -> Int {
    AudioMixInput(kind).map { mixer.resets(of: $0) } ?? 0
  }

  /// Notes a video frame's time: a paused input's return is judged against it.
  public func observeVideo(_ pts: MediaTime) {
    guard pts.isValid else { return }
    mixer.observeReference(AudioMixer.position(of: pts, sampleRate: format.sampleRate))
  }

  /// A new format record for an audio track: its decoder is opened again for it.
  /// - Throws: when the new decoder cannot be opened; the old one is kept.
  public func changeFormat(_ format: AACFormat, for kind: SampleKind) throws(AudioMixStageError) {
    guard let input = AudioMixInput(kind), decoders[input.rawValue].format != format else {
      return
    }
    decoders[input.rawValue] = try AACTrackDecoder(
      format: format, mixRate: self.format.sampleRate, mixChannels: self.format.channels)
  }

  /// Takes one AAC frame of `kind` (with or without an ADTS header) and hands `emit` every
  /// mixed AAC frame that is ready, with its time. A frame that cannot be decoded is counted
  /// and left out (its time mixes as silence).
  public func take(
    _ kind: SampleKind, pts: MediaTime, payload: UnsafeRawBufferPointer,
    emit: (_ pts: MediaTime, _ payload: UnsafeRawBufferPointer) -> Void
  ) {
    guard let input = AudioMixInput(kind), pts.isValid else { return }
    var payload = payload
    if let adts = ADTSPrefix(parsing: payload) {
      payload = UnsafeRawBufferPointer(rebasing: payload[adts.headerSize...])
    }
    let position = AudioMixer.position(of: pts, sampleRate: format.sampleRate)
    // A clock whose unit is longer than a frame (a mic stamped in whole seconds) places its
    // samples by count.
    let coarse =
      Int64(pts.timescale) * Int64(mixer.configuration.frameSamples)
      < Int64(format.sampleRate)
    do throws(AudioMixStageError) {
      try decoders[input.rawValue].decode(payload, position: position) { count, start, samples in
        mixer.push(input, position: start, count: count, coarse: coarse, samples: samples) {
          frame in
          encode(frame, emit: emit)
        }
      }
    } catch {
      note(error)
    }
  }

  /// Mixes what the inputs left and drains the encoder.
  public func finish(emit: (_ pts: MediaTime, _ payload: UnsafeRawBufferPointer) -> Void) {
    mixer.finish { encode($0, emit: emit) }
    encode(nil, emit: emit)
  }

  private func encode(
    _ frame: AudioMixFrame?, emit: (_ pts: MediaTime, _ payload: UnsafeRawBufferPointer) -> Void
  ) {
    if let frame, firstPosition == nil { firstPosition = frame.position }
    let rate = Int32(format.sampleRate)
    do throws(AudioMixStageError) {
      try encoder.encode(frame) { payload, pts in
        guard let firstPosition, pts >= firstPosition else { return }
        encodedFrames += 1
        emit(MediaTime(value: pts, timescale: rate), payload)
      }
    } catch {
      note(error)
    }
  }

  private func note(_ error: AudioMixStageError) {
    failedFrames += 1
    if firstError == nil { firstError = error }
  }
}
