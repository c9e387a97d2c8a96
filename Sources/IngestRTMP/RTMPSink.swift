import CFFmpeg
import Glibc
import IngestCore
import IngestFFmpeg
import IngestPOSIX

/// Publishes access units to an RTMP or RTMPS server through libavformat's flv muxer.
///
/// FLV carries one audio track: units of the other audio kind are answered `.discarded(.notCarried)`. Video units
/// are AVCC; 1- and 2-byte NAL length prefixes are widened to 4 bytes, and the avcC record sent as
/// the sequence header says so. Timestamps are 90 kHz ticks, made relative to the first unit written
/// after `open` and rounded down to FLV's milliseconds (composition time = pts - dts).
///
/// Every connection starts with a video keyframe: video before the first keyframe after `open`, and
/// audio before it, are discarded as `.awaitingKeyframe` (and counted in `droppedUnits`). Each `open` sends fresh sequence headers.
///
/// A format change mid-stream (a unit whose `format` is set: the device rotated, the audio route
/// changed) sends a new sequence header (AVC or AAC) just before the next packet of that track:
/// the packet carries the new record as `AV_PKT_DATA_NEW_EXTRADATA` side data, from which the
/// flv muxer writes the header tag.
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
    /// Longest time one write (or the trailer) may block before the connection counts as broken.
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
  /// The audio kind carried in the FLV; units of the other audio kind are dropped.
  public let audioKind: SampleKind
  /// Timeouts and buffer sizes.
  public let options: Options
  /// Units dropped since creation: before the first keyframe of a connection, or malformed AVCC.
  public private(set) var droppedUnits = 0

  public var payloadFormat: PayloadFormat { .accessUnits }
  public var redactedDescription: String { "rtmp sink \(target.redactedDescription)" }

  /// The AVIO buffer, the socket send buffer as the kernel sizes it (twice `SO_SNDBUF`), and the
  /// copies the rtmp protocol and the NAL length rewrite make of the largest unit seen.
  public var bufferBytes: Int {
    avioBufferSize + 2 * options.socketSendBufferSize + 2 * largestUnit + scratch.capacity
  }

  /// Time spent blocked in writes per second of media written, over the last second of media or
  /// more: near 1 the link carries barely what the stream needs.
  public private(set) var congestion: Double = 0

  private let interrupt = RTMPInterrupt()
  private let logCapture = RTMPLogCapture()
  private var context: UnsafeMutablePointer<AVFormatContext>?
  private var packet: UnsafeMutablePointer<AVPacket>?
  private var videoStream: Int32 = -1
  private var audioStream: Int32 = -1
  private var videoLengthSize = 4
  /// Per stream: a format record not yet sent as a sequence header (a format change).
  private var pendingExtradata: [[UInt8]?] = [nil, nil]
  /// 90 kHz dts of the first unit of this connection; nil until a keyframe arrives.
  private var baseDTS: Int64?
  /// Last dts written per stream, in the stream's time base.
  private var lastDTS: [Int64] = [Int64.min, Int64.min]
  private var broken = false
  private var scratch: [UInt8] = []
  private var largestUnit = 0
  /// libavformat's default AVIO buffer (IO_BUFFER_SIZE) until a connection reports its own.
  private var avioBufferSize = 32_768
  private var blockedNanoseconds: Int64 = 0
  /// Connections in a row that broke before carrying a second of media. A publish denied by
  /// the server's rules looks like this: nginx-rtmp (`deny publish`) answers Publish.Start and
  /// then closes, so connecting succeeds and one of the first writes fails (the first may still
  /// reach the socket before the close arrives).
  private var closedBeforeMedia = 0
  private var windowStartDTS: Int64?
  /// The connection's TCP socket, found after connecting (see `RTMPSocketProbe`).
  private var socketProbe: RTMPSocketProbe?
  private var linkMeter = RTMPLinkMeter()

  /// - Parameters:
  ///   - target: the parsed publish URL.
  ///   - audio: which audio kind goes into the FLV (`.audioMic` when the capture has no app audio).
  ///   - options: timeouts and buffer sizes.
  public init(target: RTMPTarget, audio: SampleKind = .audioApp, options: Options = Options()) {
    precondition(audio.isAudio, "audio must be .audioApp or .audioMic")
    self.target = target
    self.audioKind = audio
    self.options = options
  }

  deinit { close() }

  // MARK: OutputSink

  public func open(tracks: TrackFormats) throws(SinkError) {
    close()
    if let failure = FFmpegLibrary.loadFailure {
      throw .unsupported(
        endpoint: target.redactedDescription,
        reason: LibraryLoadFailure.message(
          soname: failure.soname, reason: failure.reason, install: FFmpegLibrary.install))
    }
    let audioFormat = audioKind == .audioApp ? tracks.audioApp : tracks.audioMic
    guard tracks.video != nil || audioFormat != nil else {
      throw .unsupported(
        endpoint: target.redactedDescription,
        reason: "no video and no \(audioKind) track to publish")
    }
    if let reason = Self.refusal(of: tracks, target: target) {
      throw .unsupported(endpoint: target.redactedDescription, reason: reason)
    }
    do throws(SinkError) {
      try connect(video: tracks.video?.h264, audio: audioFormat)
    } catch {
      close()
      throw error
    }
    socketProbe = RTMPSocketProbe.find(peerPort: target.port)
    linkMeter.reset(now: SystemClock().now())
  }

  /// The link from the socket's figures: what the server acknowledged, what waits in the
  /// socket, the round trip. Nil before the socket is found.
  public func linkEstimate(now: Int64) -> LinkEstimate? {
    guard context != nil, let socketProbe, let waiting = socketProbe.unacknowledgedBytes else {
      return nil
    }
    let clock = SystemClock().now()
    linkMeter.observe(unacknowledged: waiting, now: clock)
    var estimate = linkMeter.estimate(
      now: clock, unacknowledged: waiting, roundTripMilliseconds: socketProbe.roundTripMilliseconds)
    estimate.time = now
    return estimate
  }

  /// Holds the unit back while the socket holds more than its bound (see `RTMPLinkMeter`), so
  /// the backlog waits in the ring; throws `.timeout` when the server acknowledged nothing for
  /// the I/O timeout while data waited, as a write blocked that long would.
  private func socketIsFull(now: Int64) throws(SinkError) -> Bool {
    guard let socketProbe, let waiting = socketProbe.unacknowledgedBytes else { return false }
    let clock = SystemClock().now()
    linkMeter.observe(unacknowledged: waiting, now: clock)
    if waiting > 0 && linkMeter.sinceProgress(now: clock) >= nanoseconds(options.ioTimeout) {
      broken = true
      throw .timeout(
        endpoint: target.redactedDescription, operation: "write",
        reason: "the server acknowledged nothing for \(options.ioTimeout)")
    }
    return linkMeter.isQueueFull(
      unacknowledged: waiting, roundTripMilliseconds: socketProbe.roundTripMilliseconds)
  }

  public func write(_ unit: OutgoingUnit, bytes: UnsafeRawBufferPointer, now: Int64)
    throws(SinkError)
    -> SinkWriteResult
  {
    guard let context, packet != nil else {
      throw .write(endpoint: target.redactedDescription, reason: "not connected", retryable: true)
    }
    if broken {
      throw .write(endpoint: target.redactedDescription, reason: "connection lost", retryable: true)
    }
    let stream: Int32
    switch unit.kind {
    case .video: stream = videoStream
    case audioKind: stream = audioStream
    default: return .discarded(.notCarried)
    }
    guard stream >= 0 else { return .discarded(.notCarried) }
    if baseDTS != nil, try socketIsFull(now: now) {
      return .wouldBlock(retryAt: now + Self.fullSocketRetryNanoseconds)
    }
    if let format = unit.format {
      // Taken before any discard below: the units after this one are in the new format.
      guard adopt(format, stream: stream) else {
        droppedUnits += 1
        return .discarded(.invalid)
      }
    }

    if baseDTS == nil {
      guard videoStream < 0 || (unit.kind == .video && unit.isKeyframe) else {
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
    let timeBase = context.pointee.streams[Int(stream)]!.pointee.time_base
    var dts = rescale(unit.dts - base, to: timeBase)
    var pts = rescale(max(unit.pts, unit.dts) - base, to: timeBase)
    if dts < lastDTS[Int(stream)] {
      // The timeline promises monotonic dts; should it ever slip, the muxer would refuse the
      // packet and break the connection, so hold the stream at its last dts instead.
      dts = lastDTS[Int(stream)]
      pts = max(pts, dts)
    }

    if unit.kind == .video && videoLengthSize != 4 {
      guard RTMPNALLengths.widen(bytes, lengthSize: videoLengthSize, into: &scratch) else {
        droppedUnits += 1
        return .discarded(.invalid)
      }
      let result = scratch.withUnsafeBytes { widened in
        Result { () throws(SinkError) in
          try send(widened, unit: unit, stream: stream, pts: pts, dts: dts, context: context)
        }
      }
      return try result.get()
    }
    return try send(bytes, unit: unit, stream: stream, pts: pts, dts: dts, context: context)
  }

  /// Makes `format` the one the next packet of `stream` announces; false for a format FLV
  /// cannot carry on that stream.
  private func adopt(_ format: FormatDescription, stream: Int32) -> Bool {
    switch format {
    case .h264(var video) where stream == videoStream:
      videoLengthSize = video.nalLengthSize
      video.nalLengthSize = 4
      pendingExtradata[Int(stream)] = video.avcC
    case .aac(let audio) where stream == audioStream:
      pendingExtradata[Int(stream)] = audio.audioSpecificConfig
    default:
      return false
    }
    return true
  }

  private func send(
    _ payload: UnsafeRawBufferPointer, unit: OutgoingUnit, stream: Int32, pts: Int64, dts: Int64,
    context: UnsafeMutablePointer<AVFormatContext>
  ) throws(SinkError) -> SinkWriteResult {
    guard let packet, let base = payload.baseAddress, payload.count <= Int(Int32.max) else {
      droppedUnits += 1
      return .discarded(.invalid)
    }
    largestUnit = max(largestUnit, payload.count)
    // av_write_frame does not take ownership of non-refcounted data and does not modify it.
    packet.pointee.data = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: UInt8.self))
    packet.pointee.size = Int32(payload.count)
    packet.pointee.stream_index = stream
    packet.pointee.pts = pts
    packet.pointee.dts = dts
    packet.pointee.duration = 0
    packet.pointee.pos = -1
    packet.pointee.flags = unit.kind == .video && unit.isKeyframe ? AV_PKT_FLAG_KEY : 0
    let extradata = pendingExtradata[Int(stream)]
    if let extradata {
      // The muxer compares this with the stream's extradata and, when it differs, copies it
      // there and writes a sequence header tag in front of the packet.
      guard
        let side = cffmpeg_av_packet_new_side_data(
          packet, AV_PKT_DATA_NEW_EXTRADATA, extradata.count)
      else {
        throw .unsupported(endpoint: target.redactedDescription, reason: "out of memory")
      }
      side.update(from: extradata, count: extradata.count)
    }

    // av_write_frame, not av_interleaved_write_frame: the send ring already orders units by dts,
    // and the interleaver would hold every packet until each stream has one queued, which grows
    // without bound while a track is silent (app audio stops when the app makes no sound).
    let started = SystemClock().now()
    let writtenBefore = context.pointee.pb.pointee.bytes_written
    interrupt.arm(for: nanoseconds(options.ioTimeout))
    let result = RTMPLog.capturing(into: logCapture) { cffmpeg_av_write_frame(context, packet) }
    linkMeter.wrote(Int(context.pointee.pb.pointee.bytes_written - writtenBefore))
    packet.pointee.data = nil
    packet.pointee.size = 0
    if extradata != nil { cffmpeg_av_packet_free_side_data(packet) }
    measure(blockedSince: started, dts: unit.dts)
    guard result >= 0 else {
      broken = true
      let error = ioError(result, doing: .write)
      guard unit.dts - (baseDTS ?? unit.dts) < 90_000, error.isRetryable else { throw error }
      closedBeforeMedia += 1
      guard closedBeforeMedia >= Self.refusalConnections else { throw error }
      throw .publishRefused(
        endpoint: target.redactedDescription,
        reason:
          "the server accepted the publish and then closed the connection before a second of "
          + "media, \(closedBeforeMedia) times in a row (a publish denied by the server's rules, "
          + "such as nginx-rtmp's deny publish)", retryable: false)
    }
    if unit.dts - (baseDTS ?? unit.dts) >= 90_000 { closedBeforeMedia = 0 }
    lastDTS[Int(stream)] = dts
    pendingExtradata[Int(stream)] = nil
    return .written
  }

  public func close() {
    guard let context else { return }
    if context.pointee.pb != nil {
      // rtmp_close sends FCUnpublish and deleteStream; a dead peer must not hold us up for long.
      interrupt.arm(for: nanoseconds(options.closeTimeout))
      RTMPLog.capturing(into: logCapture) { cffmpeg_avio_closep(&context.pointee.pb) } as Void
    }
    cffmpeg_avformat_free_context(context)
    self.context = nil
    cffmpeg_av_packet_free(&packet)
    videoStream = -1
    audioStream = -1
    baseDTS = nil
    lastDTS = [Int64.min, Int64.min]
    pendingExtradata = [nil, nil]
    broken = false
    blockedNanoseconds = 0
    windowStartDTS = nil
    socketProbe = nil
  }

  public func finish() throws(SinkError) {
    guard let context else { return }
    defer { close() }
    if broken {
      throw .write(
        endpoint: target.redactedDescription, reason: "connection lost before finish",
        retryable: true)
    }
    interrupt.arm(for: nanoseconds(options.ioTimeout))
    let result = RTMPLog.capturing(into: logCapture) { cffmpeg_av_write_trailer(context) }
    if result < 0 { throw ioError(result, doing: .finish) }
  }

  /// Why tracks cannot be published to `target` at all, or nil when they can: checked before
  /// any connection is made, so a run that cannot succeed fails at once.
  ///
  /// HEVC needs Enhanced RTMP (the `hvc1` FourCC in the FLV video tag), which the flv muxer of
  /// the libavformat this package is built with (Debian 12, FFmpeg 5.1) does not write.
  public static func refusal(of tracks: TrackFormats, target: RTMPTarget) -> String? {
    guard case .hevc? = tracks.video else { return nil }
    return "\(target.redactedDescription): RTMP cannot carry HEVC video (this libavformat's flv "
      + "muxer has no Enhanced RTMP); send HEVC over SRT (--to srt://HOST:PORT) or HLS "
      + "(--to hls:DIR), or capture the source as H.264"
  }

  // MARK: Connecting

  private func connect(video: H264Format?, audio: AACFormat?) throws(SinkError) {
    var allocated: UnsafeMutablePointer<AVFormatContext>?
    guard cffmpeg_avformat_alloc_output_context2(&allocated, nil, "flv", nil) >= 0,
      let context = allocated
    else {
      throw .unsupported(
        endpoint: target.redactedDescription, reason: "libavformat has no flv muxer")
    }
    self.context = context
    context.pointee.interrupt_callback = interrupt.callback
    // No automatic bitstream filters (they may buffer); push every packet to the socket at once so
    // no media waits in the AVIO buffer between writes.
    context.pointee.flags =
      (context.pointee.flags & ~AVFMT_FLAG_AUTO_BSF) | AVFMT_FLAG_FLUSH_PACKETS
    context.pointee.flush_packets = 1

    if var video {
      videoLengthSize = video.nalLengthSize
      video.nalLengthSize = 4
      // The muxer insists on a size; an SPS this parser cannot read still decodes, so it gets a
      // nominal one that only the onMetaData tag carries.
      let size = H264PictureSize(sps: video.sps[0]) ?? H264PictureSize(width: 16, height: 16)
      videoStream = try addStream(to: context, extradata: video.avcC) { parameters in
        parameters.pointee.codec_type = AVMEDIA_TYPE_VIDEO
        parameters.pointee.codec_id = AV_CODEC_ID_H264
        parameters.pointee.width = Int32(size.width)
        parameters.pointee.height = Int32(size.height)
      }
    }
    if let audio {
      audioStream = try addStream(to: context, extradata: audio.audioSpecificConfig) {
        parameters in
        parameters.pointee.codec_type = AVMEDIA_TYPE_AUDIO
        parameters.pointee.codec_id = AV_CODEC_ID_AAC
        parameters.pointee.sample_rate = Int32(audio.sampleRate)
        parameters.pointee.frame_size = 1024
        cffmpeg_av_channel_layout_default(&parameters.pointee.ch_layout, Int32(audio.channels))
      }
    }
    packet = cffmpeg_av_packet_alloc()
    guard packet != nil else {
      throw .unsupported(endpoint: target.redactedDescription, reason: "out of memory")
    }

    var settings: OpaquePointer?
    defer { cffmpeg_av_dict_free(&settings) }
    // rw_timeout is a URLContext option, copied down to the tcp/tls layers; "timeout" must not be
    // used: on rtmp it means "listen for a connection".
    cffmpeg_av_dict_set(&settings, "rw_timeout", String(nanoseconds(options.ioTimeout) / 1000), 0)
    cffmpeg_av_dict_set(&settings, "rtmp_app", target.app, 0)
    cffmpeg_av_dict_set(&settings, "rtmp_playpath", target.streamKey, 0)
    cffmpeg_av_dict_set(&settings, "tcp_nodelay", "1", 0)
    cffmpeg_av_dict_set(&settings, "send_buffer_size", String(options.socketSendBufferSize), 0)
    if target.scheme == .rtmps {
      // tls protocol options, passed down by the rtmp protocol when it opens its tls layer.
      cffmpeg_av_dict_set(&settings, "tls_verify", options.verifyTLSPeer ? "1" : "0", 0)
      if let caFile = options.caFile { cffmpeg_av_dict_set(&settings, "ca_file", caFile, 0) }
    }

    interrupt.arm(for: nanoseconds(options.openTimeout))
    var io: UnsafeMutablePointer<AVIOContext>?
    var callback = context.pointee.interrupt_callback
    let opened = RTMPLog.capturing(into: logCapture) {
      cffmpeg_avio_open2(&io, target.url, AVIO_FLAG_WRITE, &callback, &settings)
    }
    guard opened >= 0, let io else { throw openError(opened) }
    context.pointee.pb = io
    avioBufferSize = Int(io.pointee.buffer_size)

    let header = RTMPLog.capturing(into: logCapture) { cffmpeg_avformat_write_header(context, nil) }
    guard header >= 0 else { throw openError(header) }
  }

  private func addStream(
    to context: UnsafeMutablePointer<AVFormatContext>, extradata: [UInt8],
    configure: (UnsafeMutablePointer<AVCodecParameters>) -> Void
  ) throws(SinkError) -> Int32 {
    guard let stream = cffmpeg_avformat_new_stream(context, nil),
      let memory = cffmpeg_av_mallocz(extradata.count + Int(AV_INPUT_BUFFER_PADDING_SIZE))
    else { throw .unsupported(endpoint: target.redactedDescription, reason: "out of memory") }
    let parameters = stream.pointee.codecpar!
    // The muxer owns extradata from here on and frees it with the context.
    let bytes = memory.bindMemory(to: UInt8.self, capacity: extradata.count)
    bytes.update(from: extradata, count: extradata.count)
    parameters.pointee.extradata = bytes
    parameters.pointee.extradata_size = Int32(extradata.count)
    configure(parameters)
    // The flv muxer resets this to 1/1000 in avformat_write_header; timestamps are rescaled from
    // 90 kHz to whatever it chose.
    stream.pointee.time_base = AVRational(num: 1, den: 90_000)
    return stream.pointee.index
  }

  // MARK: Errors

  /// Two, not one: a server restarting just as a connection begins must not end the run.
  private static let refusalConnections = 2
  /// When a unit held back for a full socket is offered again.
  private static let fullSocketRetryNanoseconds: Int64 = 10_000_000

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

  private func rescale(_ ticks: Int64, to timeBase: AVRational) -> Int64 {
    cffmpeg_av_rescale_q_rnd(ticks, AVRational(num: 1, den: 90_000), timeBase, AV_ROUND_DOWN)
  }

  private func measure(blockedSince started: Int64, dts: Int64) {
    blockedNanoseconds += SystemClock().now() - started
    guard let windowStart = windowStartDTS else { return }
    let mediaNanoseconds = (dts - windowStart) * 1_000_000_000 / 90_000
    guard mediaNanoseconds >= 1_000_000_000 else { return }
    congestion = min(1, Double(blockedNanoseconds) / Double(mediaNanoseconds))
    blockedNanoseconds = 0
    windowStartDTS = dts
  }

  private func nanoseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
  }
}
