import IngestCore

/// Replays a media file as a ReplayKit broadcast extension would receive it after its encoders.
///
/// Packets are converted per stream (length-prefixed video with an avcC or hvcC, raw AAC with its configuration),
/// stamped on the chosen clock, and released in input-time order across streams. Containers
/// interleave loosely (mp4 in chunks of up to a second), so each stream has a small queue; a sample
/// leaves when every selected stream has one waiting, or when the queues exceed
/// `maximumQueuedBytes` (a stream that ended early must not make the others pile up).
public final class MediaFileCapture {
  /// Queued payload bytes above which samples are released without waiting for every stream.
  public static let maximumQueuedBytes = 8 << 20

  /// The input's streams.
  public var streams: [DemuxedStream] { demuxer.streams }
  /// The stream index chosen for each kind, if any.
  public let selection: [SampleKind: Int]
  /// Samples delivered per kind.
  public private(set) var sampleCounts: [SampleKind: Int] = [:]
  /// Packets skipped: no timestamp, video before its first parameter sets, or video after a
  /// corrupt packet until the next keyframe.
  public private(set) var droppedPackets = 0
  /// Packets skipped because their bytes could not be converted (a corrupt NAL or ADTS frame);
  /// the capture goes on with the next packet.
  public private(set) var corruptPackets = 0
  /// Video packets at the start of a stream held until two decode times are known, so those
  /// without one (Matroska gives none for the first packets of a stream with B-frames) can be
  /// given theirs; past this many the presentation time stands in.
  public static let maximumHeldPackets = 16
  /// Input-time span of the delivered samples, in nanoseconds (first decode time to last
  /// presentation time).
  public var durationNanoseconds: Int64 {
    guard let first = firstNanoseconds, let last = lastNanoseconds else { return 0 }
    return last - first
  }

  private enum Converter {
    case h264(H264SampleConverter)
    case hevc(HEVCSampleConverter)
    case aac(AACSampleConverter)
  }

  private struct Track {
    let kind: SampleKind
    let stream: DemuxedStream
    var converter: Converter
    var announced: FormatDescription?
    var queue: [(key: Int64, item: CaptureItem)] = []
    var head = 0
    var packets = 0
    var firstKey: Int64?
    var jumped = false
    /// Leading packets waiting for their decode time, and the decode times seen so far there.
    var held: [(packet: DemuxedPacket, number: Int)] = []
    var knownDTS: [Int64] = []
    var derivingDTS = true
    /// A corrupt video packet was skipped: the frames after it wait for the next keyframe.
    var awaitingKeyframe = false

    var isEmpty: Bool { head == queue.count }
  }

  private let demuxer: MediaFileDemuxer
  private let clock: CaptureClock
  private let micClockJump: MicClockJump?
  private var tracks: [Track] = []
  private var trackOfStream: [Int: Int] = [:]
  private var queuedBytes = 0
  private var inputEnded = false
  private var firstNanoseconds: Int64?
  private var lastNanoseconds: Int64?

  /// Opens `path` and selects its streams.
  /// - Parameters:
  ///   - clock: how timestamps are expressed.
  ///   - micClockJump: a simulated interruption of the mic track.
  public init(
    path: String, video: StreamChoice = .automatic, appAudio: StreamChoice = .automatic,
    micAudio: StreamChoice = .automatic, clock: CaptureClock = .host,
    micClockJump: MicClockJump? = nil
  ) throws(CaptureError) {
    demuxer = try MediaFileDemuxer(path: path)
    self.clock = clock
    self.micClockJump = micClockJump
    let streams = demuxer.streams
    let videos = streams.filter { $0.mediaType == .video }.map(\.index)
    let audios = streams.filter { $0.mediaType == .audio }.map(\.index)
    func resolve(_ choice: StreamChoice, automatic: Int?) throws(CaptureError) -> Int? {
      switch choice {
      case .none: return nil
      case .automatic: return automatic
      case .index(let index):
        guard streams.indices.contains(index) else {
          throw .noSuchStream(index: index, streamCount: streams.count)
        }
        return index
      }
    }
    var selection: [SampleKind: Int] = [:]
    let roles: [(SampleKind, StreamChoice, Int?)] = [
      (.video, video, videos.first),
      (.audioApp, appAudio, audios.first),
      (.audioMic, micAudio, audios.dropFirst().first),
    ]
    for (kind, choice, automatic) in roles {
      guard let index = try resolve(choice, automatic: automatic) else { continue }
      let stream = streams[index]
      let role = Self.role(kind)
      if let other = selection.first(where: { $0.value == index }) {
        throw .unsupportedStream(
          index: index, role: role, found: "already the \(Self.role(other.key)) track")
      }
      let converter: Converter
      switch (kind, stream.mediaType, stream.codec) {
      case (.video, .video, .h264):
        converter = .h264(try H264SampleConverter(extradata: stream.extradata, stream: index))
      case (.video, .video, .hevc):
        converter = .hevc(try HEVCSampleConverter(extradata: stream.extradata, stream: index))
      case (.audioApp, .audio, .aac), (.audioMic, .audio, .aac):
        converter = .aac(try AACSampleConverter(extradata: stream.extradata, stream: index))
      case (.video, .video, _), (.audioApp, .audio, _), (.audioMic, .audio, _):
        throw .unsupportedCodec(index: index, kind: kind, found: stream.summary)
      default:
        throw .unsupportedStream(index: index, role: role, found: stream.summary)
      }
      trackOfStream[index] = tracks.count
      tracks.append(Track(kind: kind, stream: stream, converter: converter))
      selection[kind] = index
    }
    guard !tracks.isEmpty else { throw .nothingSelected }
    self.selection = selection
  }

  /// The next item, or `nil` when the input is exhausted.
  public func next() throws(CaptureError) -> CaptureItem? {
    while true {
      let allWaiting = tracks.allSatisfy { !$0.isEmpty }
      if inputEnded || allWaiting || queuedBytes > Self.maximumQueuedBytes,
        let item = popEarliest()
      {
        return item
      }
      if inputEnded {
        for track in tracks where track.kind == .video && track.announced == nil {
          throw .missingParameterSets(stream: track.stream.index)
        }
        return nil
      }
      guard let packet = try demuxer.nextPacket() else {
        for index in tracks.indices { try releaseHeld(track: index) }
        inputEnded = true
        continue
      }
      if let index = trackOfStream[packet.streamIndex] { try hold(packet, track: index) }
    }
  }

  private func popEarliest() -> CaptureItem? {
    var best: Int?
    for index in tracks.indices where !tracks[index].isEmpty {
      let key = tracks[index].queue[tracks[index].head].key
      if best == nil || key < tracks[best!].queue[tracks[best!].head].key { best = index }
    }
    guard let best else { return nil }
    let item = tracks[best].queue[tracks[best].head].item
    tracks[best].head += 1
    if tracks[best].isEmpty {
      tracks[best].queue.removeAll(keepingCapacity: true)
      tracks[best].head = 0
    }
    if case .sample(let sample) = item {
      queuedBytes -= sample.payload.count
      sampleCounts[sample.kind, default: 0] += 1
    }
    return item
  }

  /// Holds the leading video packets of a track until its decode times are known: a packet
  /// without a DTS gets the first known DTS minus one DTS step per packet it precedes (the step
  /// between the first two known ones), so the first GOP keeps its decode order.
  private func hold(_ packet: DemuxedPacket, track index: Int) throws(CaptureError) {
    let number = tracks[index].packets
    tracks[index].packets += 1
    guard tracks[index].kind == .video, tracks[index].derivingDTS else {
      return try accept(packet, number: number, track: index)
    }
    if let dts = packet.dts { tracks[index].knownDTS.append(dts) }
    if tracks[index].held.isEmpty && packet.dts != nil {
      // Decode times from the first packet: nothing to derive.
      tracks[index].derivingDTS = false
      return try accept(packet, number: number, track: index)
    }
    tracks[index].held.append((packet, number))
    if tracks[index].knownDTS.count >= 2 || tracks[index].held.count >= Self.maximumHeldPackets {
      try releaseHeld(track: index)
    }
  }

  /// Gives the held packets their derived decode times and accepts them in order.
  private func releaseHeld(track index: Int) throws(CaptureError) {
    let held = tracks[index].held
    guard !held.isEmpty else { return }
    tracks[index].held = []
    tracks[index].derivingDTS = false
    let known = tracks[index].knownDTS
    let firstKnown = held.firstIndex { $0.packet.dts != nil }
    for (position, entry) in held.enumerated() {
      var packet = entry.packet
      if packet.dts == nil, let firstKnown, known.count >= 2, position < firstKnown {
        let step = known[1] - known[0]
        let derived = known[0] - Int64(firstKnown - position) * step
        packet.dts = packet.pts.map { min($0, derived) } ?? derived
      }
      try accept(packet, number: entry.number, track: index)
    }
  }

  private func accept(_ packet: DemuxedPacket, number: Int, track index: Int) throws(CaptureError) {
    guard let decode = packet.dts ?? packet.pts, let presentation = packet.pts ?? packet.dts else {
      droppedPackets += 1
      return
    }
    var result: (payload: [UInt8]?, formatChanged: Bool) = (nil, false)
    var format: FormatDescription?
    do {
      switch tracks[index].converter {
      case .h264(var converter):
        result = try converter.convert(packet.data, packet: number)
        format = converter.format.map { .h264($0) }
        tracks[index].converter = .h264(converter)
      case .hevc(var converter):
        result = try converter.convert(packet.data, packet: number)
        format = converter.format.map { .hevc($0) }
        tracks[index].converter = .hevc(converter)
      case .aac(var converter):
        result = try converter.convert(packet.data, packet: number)
        format = converter.format.map { .aac($0) }
        tracks[index].converter = .aac(converter)
      }
    } catch {
      // One bad packet is not the end of the input: skip it and count it. A lost video frame
      // may be a reference, so the video after it waits for a keyframe.
      corruptPackets += 1
      if tracks[index].kind == .video { tracks[index].awaitingKeyframe = true }
      return
    }
    if tracks[index].awaitingKeyframe {
      guard packet.isKeyframe else {
        droppedPackets += 1
        return
      }
      tracks[index].awaitingKeyframe = false
    }
    guard let payload = result.payload else { return }
    guard let format else {
      droppedPackets += 1
      return
    }
    let track = tracks[index]
    let timeBase = track.stream.timeBase
    let key = CaptureClock.nanoseconds(decode, timeBase: timeBase)
    let presentationNanoseconds = CaptureClock.nanoseconds(presentation, timeBase: timeBase)
    firstNanoseconds = min(firstNanoseconds ?? key, key)
    lastNanoseconds = max(lastNanoseconds ?? presentationNanoseconds, presentationNanoseconds)
    if track.firstKey == nil { tracks[index].firstKey = key }
    if track.announced != format {
      tracks[index].announced = format
      tracks[index].queue.append((key, .format(track.kind, format)))
    }
    var shift: Int64 = 0
    if track.kind == .audioMic, let jump = micClockJump,
      key - (tracks[index].firstKey ?? key) >= jump.at
    {
      shift = jump.jump
      if !track.jumped {
        tracks[index].jumped = true
        let at = (tracks[index].firstKey ?? key) + jump.at
        tracks[index].queue.append(
          (
            key,
            .event(
              .audioInterruptionBegan(
                .audioMic, at: clock.time(nanoseconds: at, timeBase: timeBase)))
          ))
        tracks[index].queue.append(
          (
            key,
            .event(
              .audioInterruptionEnded(
                .audioMic, at: clock.time(nanoseconds: at + shift, timeBase: timeBase)))
          ))
      }
    }
    let pts = clock.time(presentation, timeBase: timeBase, shift: shift)
    let dts = decode == presentation ? nil : clock.time(decode, timeBase: timeBase, shift: shift)
    let sample = MediaSample(
      kind: track.kind, pts: pts, dts: dts, isKeyframe: track.kind.isAudio || packet.isKeyframe,
      payload: payload)
    tracks[index].queue.append((key, .sample(sample)))
    queuedBytes += payload.count
  }

  /// How messages name the track of `kind`.
  static func role(_ kind: SampleKind) -> String {
    switch kind {
    case .video: "video"
    case .audioApp: "app audio"
    case .audioMic: "mic audio"
    }
  }
}
