import CFFmpeg
import Glibc
import IngestCore
import IngestFFmpeg
import IngestPOSIX

/// Publishes access units to an RTMP or RTMPS server as FLV tags of its own making
/// (`FLVTagWriter`), carried by libavformat's `rtmp`/`rtmps` protocol (`RTMPConnection`).
///
/// What goes in the FLV (`RTMPTracks`): H.264 in legacy AVC tags; HEVC in Enhanced RTMP v1
/// extended tags (FourCC `hvc1`: SequenceStart with the hvcC record, CodedFrames with the
/// composition time, SequenceEnd at `finish`); the first audio kind asked for in legacy AAC
/// tags, and, when two were asked for (`--audio both`), the second in Enhanced RTMP v2
/// multitrack tags as track 1. Units of an audio kind not carried are answered
/// `.discarded(.notCarried)`. Each connection opens with `onMetaData` and the sequence headers.
///
/// Video units are AVCC; 1- and 2-byte NAL length prefixes are widened to 4 bytes, and the
/// record sent as the sequence header says so. Timestamps are 90 kHz ticks, made relative to the
/// first unit written after `open` and rounded down to FLV's milliseconds (composition time =
/// pts - dts).
///
/// Every connection starts with a video keyframe: video before the first keyframe after `open`,
/// and audio before it, are discarded as `.awaitingKeyframe` (and counted in `droppedUnits`).
///
/// A format change mid-stream (a unit whose `format` is set: the device rotated, the audio route
/// changed) sends a new sequence header for that track just before the unit.
///
/// A server without Enhanced RTMP may accept the publish and drop the connection at the first
/// extended tag: when a connection whose stream has E-RTMP tags breaks before a second of media
/// (or within a second of connecting),
/// twice in a row, the run stops with a refused publish that says so.
///
/// Threading: all calls come from one thread (the sender), which is where all libavformat I/O
/// runs. No call blocks longer than its timeout in `Options`.
///
/// libavformat logs URLs with the stream key in them, so this sink silences libavformat's log for
/// the whole process (see `RTMPLog`); error-level lines from its own calls are redacted and quoted
/// in the `SinkError` it throws.
public final class RTMPSink: OutputSink {
  /// Timeouts and buffer sizes.
  public struct Options: Sendable, Equatable {
    /// Longest time one write (or the end of the stream) may block before the connection counts
    /// as broken.
    public var ioTimeout: Duration
    /// Longest time connecting may take: DNS, TCP, TLS, RTMP handshake, connect and publish.
    public var openTimeout: Duration
    /// Longest time `close()` spends telling the server the stream ended.
    public var closeTimeout: Duration
    /// The socket send buffer requested (`SO_SNDBUF`; Linux doubles it). Entered in `bufferBytes`.
    public var socketSendBufferSize: Int
    /// For rtmps: check the server certificate (against `caFile`, or the system trust store)
    /// and the host name. Off only when asked for (`--insecure`, tests).
    public var verifyTLSPeer: Bool
    /// For rtmps: a PEM file of the certificate authorities to trust instead of the system's.
    public var caFile: String?

    public init(
      ioTimeout: Duration = .seconds(5), openTimeout: Duration = .seconds(10),
      closeTimeout: Duration = .seconds(1), socketSendBufferSize: Int = 256 * 1024,
      verifyTLSPeer: Bool = true, caFile: String? = nil
    ) {
      self.ioTimeout = ioTimeout
      self.openTimeout = openTimeout
      self.closeTimeout = closeTimeout
      self.socketSendBufferSize = socketSendBufferSize
      self.verifyTLSPeer = verifyTLSPeer
      self.caFile = caFile
    }
  }

  /// Where the stream goes.
  public let target: RTMPTarget
  /// The audio kinds carried, the default (legacy) track first; a second one goes as an E-RTMP
  /// multitrack track. Units of another audio kind are dropped.
  public let audioKinds: [SampleKind]
  /// The default audio track's kind.
  public var audioKind: SampleKind { audioKinds[0] }
  /// Timeouts and buffer sizes.
  public let options: Options
  /// Units dropped since creation: before the first keyframe of a connection, or malformed AVCC.
  public private(set) var droppedUnits = 0

  public var payloadFormat: PayloadFormat { .accessUnits }
  public var redactedDescription: String { "rtmp sink \(target.redactedDescription)" }

  /// The AVIO buffer, the socket send buffer as the kernel sizes it (twice `SO_SNDBUF`), and the
  /// copies the rtmp protocol and the NAL length rewrite make of the largest unit seen.
  public var bufferBytes: Int {
    connection.bufferSize + 2 * options.socketSendBufferSize + 2 * largestUnit + scratch.capacity
  }

  /// Time spent blocked in writes per second of media written, over the last second of media or
  /// more: near 1 the link carries barely what the stream needs.
  public private(set) var congestion: Double = 0

  private let interrupt = RTMPInterrupt()
  private let logCapture = RTMPLogCapture()
  private let connection = RTMPConnection()
  private var writer = FLVTagWriter()
  /// What this connection carries; nil while not connected.
  private var tracks: RTMPTracks?
  private var videoLengthSize = 4
  /// A video record not yet sent as a sequence header (a format change).
  private var pendingVideoConfiguration: [UInt8]?
  /// Per audio track in tag order: a record not yet sent as a sequence header.
  private var pendingAudioConfiguration: [[UInt8]?] = [nil, nil]
  /// 90 kHz dts of the first unit of this connection; nil until a keyframe arrives.
  private var baseDTS: Int64?
  /// Last tag timestamp written (milliseconds) per stream: video, then audio in tag order.
  private var lastTimestamp: [Int64] = [-1, -1, -1]
  private var broken = false
  private var scratch: [UInt8] = []
  private var largestUnit = 0
  private var blocked: TimeSpan = .zero
  /// Connections in a row that broke before carrying a second of media, or within a second of
  /// connecting. A publish denied by the server's rules looks like this: nginx-rtmp (`deny
  /// publish`) answers Publish.Start and then closes, so connecting succeeds and one of the
  /// first writes fails (the first may still reach the socket before the close arrives). So
  /// does a server without Enhanced RTMP that drops a stream at its first extended tag. The
  /// second, in wall-clock time, is for a reconnect that drains a backlog: it writes a second
  /// of media faster than the server's close comes back.
  private var closedBeforeMedia = 0
  /// When this connection's publish was accepted.
  private var connectedAt: MonotonicInstant = .origin
  private var windowStartDTS: Int64?
  /// The connection's TCP socket, found after connecting (see `RTMPSocketProbe`).
  private var socketProbe: RTMPSocketProbe?
  private var linkMeter = RTMPLinkMeter()
  private let clock: any PipelineClock

  /// - Parameters:
  ///   - target: the parsed publish URL.
  ///   - audio: which audio kind goes into the FLV (`.audioMic` when the capture has no app audio).
  ///   - options: timeouts and buffer sizes.
  public convenience init(
    target: RTMPTarget, audio: SampleKind = .audioApp, options: Options = Options()
  ) {
    self.init(target: target, audioTracks: [audio], options: options)
  }

  /// - Parameters:
  ///   - target: the parsed publish URL.
  ///   - audioTracks: one or two distinct audio kinds: the first in legacy AAC tags, the second
  ///     in E-RTMP v2 multitrack tags (track 1).
  ///   - options: timeouts and buffer sizes.
  ///   - clock: the run's clock: what the link is measured and a break after connecting is
  ///     timed on. libavformat's own timeouts keep to `SystemClock` (`RTMPInterrupt`).
  public init(
    target: RTMPTarget, audioTracks: [SampleKind], options: Options = Options(),
    clock: any PipelineClock = SystemClock()
  ) {
    precondition(
      (1...2).contains(audioTracks.count) && audioTracks.allSatisfy(\.isAudio)
        && Set(audioTracks).count == audioTracks.count,
      "audio tracks must be one or two distinct audio kinds")
    self.target = target
    self.audioKinds = audioTracks
    self.options = options
    self.clock = clock
  }

  deinit { close() }

  // MARK: OutputSink

  public func open(tracks formats: TrackFormats) throws(SinkError) {
    close()
    if let failure = FFmpegLibrary.loadFailure {
      throw .unsupported(
        endpoint: target.redactedDescription,
        reason: LibraryLoadFailure.message(
          soname: failure.soname, reason: failure.reason, install: FFmpegLibrary.install))
    }
    let tracks = RTMPTracks(tracks: formats, audio: audioKinds)
    guard tracks.video != nil || !tracks.audio.isEmpty else {
      throw .unsupported(
        endpoint: target.redactedDescription,
        reason: "no video and no \(audioKinds.map(\.description).joined(separator: " or ")) "
          + "track to publish")
    }
    do throws(SinkError) {
      try connect(tracks)
    } catch {
      close()
      throw error
    }
    socketProbe = RTMPSocketProbe.find(peerPort: target.port)
    connectedAt = clock.now()
    linkMeter.reset(now: connectedAt)
  }

  /// The link from the socket's figures: what the server acknowledged, what waits in the
  /// socket, the round trip. Nil before the socket is found.
  public func linkEstimate(now: MonotonicInstant) -> LinkEstimate? {
    guard tracks != nil, let socketProbe, let waiting = socketProbe.unacknowledgedBytes else {
      return nil
    }
    // Read afresh: a pump's writes may have blocked since `now` was taken.
    let measured = clock.now()
    linkMeter.observe(unacknowledged: waiting, now: measured)
    var estimate = linkMeter.estimate(
      now: measured, unacknowledged: waiting,
      roundTripMilliseconds: socketProbe.roundTripMilliseconds)
    estimate.time = now
    return estimate
  }

  /// Holds the unit back while the socket holds more than its bound (see `RTMPLinkMeter`), so
  /// the backlog waits in the ring; throws `.timeout` when the server acknowledged nothing for
  /// the I/O timeout while data waited, as a write blocked that long would.
  private func socketIsFull() throws(SinkError) -> Bool {
    guard let socketProbe, let waiting = socketProbe.unacknowledgedBytes else { return false }
    let measured = clock.now()
    linkMeter.observe(unacknowledged: waiting, now: measured)
    if waiting > 0 && linkMeter.sinceProgress(now: measured) >= TimeSpan(options.ioTimeout) {
      broken = true
      throw .timeout(
        endpoint: target.redactedDescription, operation: "write",
        reason: "the server acknowledged nothing for \(options.ioTimeout)")
    }
    return linkMeter.isQueueFull(
      unacknowledged: waiting, roundTripMilliseconds: socketProbe.roundTripMilliseconds)
  }

  public func write(_ unit: OutgoingUnit, bytes: UnsafeRawBufferPointer, now: MonotonicInstant)
    throws(SinkError)
    -> SinkWriteResult
  {
    guard let tracks, connection.isOpen else {
      throw .write(endpoint: target.redactedDescription, reason: "not connected", retryable: true)
    }
    if broken {
      throw .write(endpoint: target.redactedDescription, reason: "connection lost", retryable: true)
    }
    // The stream's index in `lastTimestamp`: 0 video, 1 and 2 the audio tracks in tag order.
    let stream: Int
    if unit.kind == .video {
      guard tracks.video != nil else { return .discarded(.notCarried) }
      stream = 0
    } else {
      guard let index = tracks.audio.firstIndex(where: { $0.kind == unit.kind }) else {
        return .discarded(.notCarried)
      }
      stream = 1 + index
    }
    if baseDTS != nil, try socketIsFull() {
      return .wouldBlock(retryAt: now + Self.fullSocketRetry)
    }
    if let format = unit.format {
      // Taken before any discard below: the units after this one are in the new format.
      guard adopt(format, stream: stream, tracks: tracks) else {
        droppedUnits += 1
        return .discarded(.invalid)
      }
    }

    if baseDTS == nil {
      guard tracks.video == nil || (unit.kind == .video && unit.isKeyframe) else {
        droppedUnits += 1
        return .discarded(.awaitingKeyframe)
      }
      baseDTS = unit.dts
      windowStartDTS = unit.dts
    }
    guard let base = baseDTS, unit.dts >= base else {
      droppedUnits += 1
      return .discarded(.awaitingKeyframe)
    }
    var dts = (unit.dts - base) / 90
    var pts = (max(unit.pts, unit.dts) - base) / 90
    if dts < lastTimestamp[stream] {
      // The timeline promises monotonic dts; should it ever slip, a server could refuse the
      // stream, so hold the stream at its last timestamp instead.
      dts = lastTimestamp[stream]
      pts = max(pts, dts)
    }
    let timestamp = UInt32(truncatingIfNeeded: dts)

    if unit.kind == .video {
      if let configuration = pendingVideoConfiguration, let codec = tracks.videoCodec {
        let header = FLVVideoTagHeader(codec: codec, packet: .sequenceStart, isKeyframe: true)
        guard writer.frame(video: header, payloadSize: configuration.count, timestamp: timestamp)
        else { return dropInvalid() }
        try send(configuration, dts: unit.dts)
        pendingVideoConfiguration = nil
      }
      let header = FLVVideoTagHeader(
        codec: tracks.videoCodec ?? .avc,
        packet: .codedFrames(compositionTime: Int32(clamping: min(pts - dts, 0x7F_FFFF))),
        isKeyframe: unit.isKeyframe)
      if videoLengthSize != 4 {
        guard RTMPNALLengths.widen(bytes, lengthSize: videoLengthSize, into: &scratch) else {
          return dropInvalid()
        }
        guard writer.frame(video: header, payloadSize: scratch.count, timestamp: timestamp) else {
          return dropInvalid()
        }
        try send(scratch, dts: unit.dts)
      } else {
        guard writer.frame(video: header, payloadSize: bytes.count, timestamp: timestamp) else {
          return dropInvalid()
        }
        try send(bytes, dts: unit.dts)
      }
    } else {
      let trackID = tracks.audio[stream - 1].trackID
      if let configuration = pendingAudioConfiguration[stream - 1] {
        let header = FLVAudioTagHeader(packet: .sequenceStart, trackID: trackID)
        guard writer.frame(audio: header, payloadSize: configuration.count, timestamp: timestamp)
        else { return dropInvalid() }
        try send(configuration, dts: unit.dts)
        pendingAudioConfiguration[stream - 1] = nil
      }
      let header = FLVAudioTagHeader(packet: .codedFrames, trackID: trackID)
      guard writer.frame(audio: header, payloadSize: bytes.count, timestamp: timestamp) else {
        return dropInvalid()
      }
      try send(bytes, dts: unit.dts)
    }
    largestUnit = max(largestUnit, bytes.count)
    lastTimestamp[stream] = dts
    return .written
  }

  private func dropInvalid() -> SinkWriteResult {
    droppedUnits += 1
    return .discarded(.invalid)
  }

  /// Makes `format` the one the next unit of `stream` announces; false for a format this
  /// connection's tags cannot carry on that stream (another video codec than the one opened).
  private func adopt(_ format: FormatDescription, stream: Int, tracks: RTMPTracks) -> Bool {
    switch (format, tracks.videoCodec) {
    case (.h264(let video), .avc?) where stream == 0:
      videoLengthSize = video.nalLengthSize
      pendingVideoConfiguration = RTMPTracks.configurationRecord(.h264(video))
    case (.hevc(let video), .hevc?) where stream == 0:
      videoLengthSize = video.nalLengthSize
      pendingVideoConfiguration = RTMPTracks.configurationRecord(.hevc(video))
    case (.aac(let audio), _) where stream > 0:
      pendingAudioConfiguration[stream - 1] = audio.audioSpecificConfig
    default:
      return false
    }
    return true
  }

  /// `send` of bytes in an array.
  private func send(_ payload: [UInt8], dts: Int64) throws(SinkError) {
    let result = payload.withUnsafeBytes { bytes in
      Result { () throws(SinkError) in try send(bytes, dts: dts) }
    }
    try result.get()
  }

  /// Writes the tag `writer` framed around `payload`, and measures it.
  /// - Parameter dts: the unit's 90 kHz dts, for the congestion window and the refusal check.
  private func send(_ payload: UnsafeRawBufferPointer, dts: Int64) throws(SinkError) {
    let started = clock.now()
    let writtenBefore = connection.bytesWritten
    interrupt.arm(for: TimeSpan(options.ioTimeout))
    let result = writer.head.withUnsafeBytes { head in
      writer.tail.withUnsafeBytes { tail in
        RTMPLog.capturing(into: logCapture) { connection.write(head, payload, tail) }
      }
    }
    linkMeter.wrote(Int(connection.bytesWritten - writtenBefore))
    measure(blockedSince: started, dts: dts)
    let early =
      dts - (baseDTS ?? dts) < MediaTicks.perSecond
      || started - connectedAt < Self.earlyClose
    guard result >= 0 else {
      broken = true
      let error = ioError(result, doing: .write)
      guard early, error.isRetryable else { throw error }
      closedBeforeMedia += 1
      guard closedBeforeMedia >= Self.refusalConnections else { throw error }
      throw .publishRefused(
        endpoint: target.redactedDescription,
        reason: refusalReason(tracks), retryable: false)
    }
    if !early { closedBeforeMedia = 0 }
  }

  /// Why the server is taken to refuse the stream after connections that closed before a
  /// second of media (or within a second of connecting).
  private func refusalReason(_ tracks: RTMPTracks?) -> String {
    let times = "\(closedBeforeMedia) times in a row"
    guard let tracks, tracks.isEnhanced else {
      return "the server accepted the publish and then closed the connection at once (before "
        + "a second of media), \(times) (a publish denied by the server's rules, such as "
        + "nginx-rtmp's deny publish)"
    }
    return "the server accepted the publish and then dropped the stream right after its first "
      + "Enhanced RTMP tags, \(times): a server without Enhanced "
      + "RTMP (E-RTMP) does that for \(tracks.enhancedDescription); send H.264 with one audio "
      + "track to it, or HEVC over SRT or HLS (or a publish denied by the server's rules)"
  }

  public func close() {
    if connection.isOpen {
      // rtmp_close sends FCUnpublish and deleteStream; a dead peer must not hold us up for long.
      interrupt.arm(for: TimeSpan(options.closeTimeout))
      RTMPLog.capturing(into: logCapture) { connection.close() } as Void
    }
    tracks = nil
    baseDTS = nil
    lastTimestamp = [-1, -1, -1]
    pendingVideoConfiguration = nil
    pendingAudioConfiguration = [nil, nil]
    broken = false
    blocked = .zero
    windowStartDTS = nil
    socketProbe = nil
  }

  /// Ends the stream: an end-of-sequence video tag (AVC end of sequence, or the E-RTMP
  /// SequenceEnd for HEVC) at the last video timestamp, then the close.
  public func finish() throws(SinkError) {
    guard let tracks, connection.isOpen else { return }
    defer { close() }
    if broken {
      throw .write(
        endpoint: target.redactedDescription, reason: "connection lost before finish",
        retryable: true)
    }
    guard let codec = tracks.videoCodec, lastTimestamp[0] >= 0 else { return }
    let header = FLVVideoTagHeader(codec: codec, packet: .sequenceEnd, isKeyframe: true)
    _ = writer.frame(
      video: header, payloadSize: 0, timestamp: UInt32(truncatingIfNeeded: lastTimestamp[0]))
    interrupt.arm(for: TimeSpan(options.ioTimeout))
    let result = writer.head.withUnsafeBytes { head in
      writer.tail.withUnsafeBytes { tail in
        RTMPLog.capturing(into: logCapture) { connection.write(head, tail) }
      }
    }
    if result < 0 { throw ioError(result, doing: .finish) }
  }

  // MARK: Connecting

  private func connect(_ tracks: RTMPTracks) throws(SinkError) {
    var settings: OpaquePointer?
    defer { cffmpeg_av_dict_free(&settings) }
    // rw_timeout is a URLContext option, copied down to the tcp/tls layers; "timeout" must not be
    // used: on rtmp it means "listen for a connection".
    cffmpeg_av_dict_set(
      &settings, "rw_timeout",
      String(TimeSpan(options.ioTimeout).nanoseconds / TimeSpan.nanosecondsPerMicrosecond), 0)
    cffmpeg_av_dict_set(&settings, "rtmp_app", target.app, 0)
    cffmpeg_av_dict_set(&settings, "rtmp_playpath", target.streamKey, 0)
    cffmpeg_av_dict_set(&settings, "tcp_nodelay", "1", 0)
    cffmpeg_av_dict_set(&settings, "send_buffer_size", String(options.socketSendBufferSize), 0)
    if target.scheme == .rtmps {
      // tls protocol options, passed down by the rtmp protocol when it opens its tls layer.
      cffmpeg_av_dict_set(&settings, "tls_verify", options.verifyTLSPeer ? "1" : "0", 0)
      if let caFile = options.caFile { cffmpeg_av_dict_set(&settings, "ca_file", caFile, 0) }
    }

    interrupt.arm(for: TimeSpan(options.openTimeout))
    let opened = RTMPLog.capturing(into: logCapture) {
      connection.open(url: target.url, settings: &settings, interrupt: interrupt.callback)
    }
    guard opened >= 0 else { throw openError(opened) }
    self.tracks = tracks

    // The FLV header, onMetaData and the sequence headers, at timestamp 0, left in the AVIO
    // buffer: they leave with the first unit.
    var head = FLVTagHeader.fileHeader(audio: !tracks.audio.isEmpty, video: tracks.video != nil)
    let metadata = tracks.metadata.body
    _ = writer.frame(scriptSize: metadata.count, timestamp: 0)
    head += writer.tag(with: metadata)
    if let video = tracks.video, let codec = tracks.videoCodec {
      videoLengthSize = video.nalLengthSize
      let record = RTMPTracks.configurationRecord(video)
      let header = FLVVideoTagHeader(codec: codec, packet: .sequenceStart, isKeyframe: true)
      guard writer.frame(video: header, payloadSize: record.count, timestamp: 0) else {
        throw .unsupported(endpoint: target.redactedDescription, reason: "video record too large")
      }
      head += writer.tag(with: record)
    }
    for track in tracks.audio {
      let header = FLVAudioTagHeader(packet: .sequenceStart, trackID: track.trackID)
      let record = track.format.audioSpecificConfig
      _ = writer.frame(audio: header, payloadSize: record.count, timestamp: 0)
      head += writer.tag(with: record)
    }
    interrupt.arm(for: TimeSpan(options.ioTimeout))
    let written = head.withUnsafeBytes { bytes in
      RTMPLog.capturing(into: logCapture) { connection.write([bytes], flush: false) }
    }
    guard written >= 0 else { throw openError(written) }
  }

  // MARK: Errors

  /// Two, not one: a server restarting just as a connection begins must not end the run.
  private static let refusalConnections = 2
  /// A break this soon after connecting counts as the server closing at once (see
  /// `closedBeforeMedia`), whatever media went.
  private static let earlyClose: TimeSpan = .seconds(1)
  /// When a unit held back for a full socket is offered again.
  private static let fullSocketRetry: TimeSpan = .milliseconds(10)

  private func openError(_ code: Int32) -> SinkError { mapped(code, during: .connect) }

  private func ioError(_ code: Int32, doing operation: RTMPErrorMapping.Operation) -> SinkError {
    mapped(code, during: operation)
  }

  private func mapped(_ code: Int32, during operation: RTMPErrorMapping.Operation) -> SinkError {
    RTMPErrorMapping.sinkError(
      code: code, during: operation, logged: logCapture.message, detail: detail(code),
      endpoint: target.redactedDescription)
  }

  /// "<libav error> (<first logged error>)" with the key and credentials blanked out.
  private func detail(_ code: Int32) -> String {
    var buffer = [CChar](repeating: 0, count: 128)
    cffmpeg_av_strerror(code, &buffer, buffer.count)
    var text = String(
      decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    if let logged = logCapture.message { text += " (\(logged))" }
    return redact(text)
  }

  private func redact(_ text: String) -> String {
    var text = text
    for secret in [target.userInfo, target.streamKey].compactMap({ $0 }) where !secret.isEmpty {
      text = text.replacing(secret, with: "***")
    }
    return text
  }

  // MARK: Timing

  private func measure(blockedSince started: MonotonicInstant, dts: Int64) {
    blocked += clock.now() - started
    guard let windowStart = windowStartDTS else { return }
    let media = MediaTicks(dts - windowStart).span
    guard media >= .seconds(1) else { return }
    congestion = min(1, blocked.inSeconds / media.inSeconds)
    blocked = .zero
    windowStartDTS = dts
  }
}
