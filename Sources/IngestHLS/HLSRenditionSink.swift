import IngestCore

/// Writes video with two audio tracks the HLS way (`--audio both`): the video and each audio
/// track in a media playlist of its own (`HLSRendition`, an `HLSSink` in a subdirectory: its
/// journal, segments, window and recovery), and a multivariant playlist that offers the audio
/// tracks as alternate renditions (`EXT-X-MEDIA:TYPE=AUDIO`, app audio the default) of the one
/// video variant. Players at their defaults play one audio track beside the video and let the
/// viewer switch; a second track muxed into the video's segments they refuse or ignore.
///
/// The sink takes the ring's access units and routes each to its rendition: fMP4 renditions
/// take them as they are, TS renditions get a transport stream of their own
/// (`HLSRenditionPacketizer`). The audio renditions cut where the video did: at the first audio
/// frame at or after the decode time of each video segment's first keyframe, so their segments
/// line up with the video's to within a frame.
public final class HLSRenditionSink: OutputSink {
  /// The recording directory and how each rendition is written; `directory` is the set's, each
  /// rendition's is a subdirectory of it.
  public let configuration: HLSSink.Configuration
  /// The renditions, by `HLSRendition.rawValue`; nil for a track the input lacks.
  private var renditions: [HLSSink?]
  /// TS renditions: their transport streams, by `HLSRendition.rawValue`.
  private var packetizers: [HLSRenditionPacketizer?]
  private var tracks: TrackFormats
  /// Peak and summed figures of each rendition's completed segments, for `BANDWIDTH`.
  private var peakBitsPerSecond = [0, 0, 0]
  private var segmentBytes: [Int64] = [0, 0, 0]
  private var segmentTicks: [Int64] = [0, 0, 0]
  /// The peak video plus audio bit rate in the multivariant playlist as last written; nil
  /// before it is written (once the video's first segment is complete).
  private var writtenBandwidth: Int?

  /// Whether a recording of `tracks` is written as a set: video and both audio tracks.
  public static func applies(to tracks: TrackFormats) -> Bool {
    tracks.video != nil && tracks.audioApp != nil && tracks.audioMic != nil
  }

  /// - Parameters:
  ///   - configuration: the set's directory, playlist name (of every playlist of the set),
  ///     target duration, window and container.
  ///   - tracks: the run's tracks (a rendition per track).
  public init(configuration: HLSSink.Configuration, tracks: TrackFormats) {
    self.configuration = configuration
    self.tracks = tracks
    renditions = HLSRendition.allCases.map { rendition in
      guard let format = tracks.format(for: rendition.kind) else { return nil }
      var inner = configuration
      inner.directory = HLSFileSystem.join(configuration.directory, rendition.directoryName)
      var only = TrackFormats()
      only.set(format, for: rendition.kind)
      let sink = HLSSink(configuration: inner, tracks: only)
      sink.followsCuts = rendition != .video
      return sink
    }
    packetizers = Array(repeating: nil, count: HLSRendition.allCases.count)
    for rendition in HLSRendition.allCases { observeSegments(of: rendition) }
  }

  /// Has the rendition's completed segments counted (`completed`), after whatever reports them.
  private func observeSegments(of rendition: HLSRendition) {
    guard let sink = renditions[rendition.rawValue] else { return }
    let reporting = sink.onSegment
    sink.onSegment = { [weak self] segment in
      reporting?(segment)
      self?.completed(segment, of: rendition)
    }
  }

  public var payloadFormat: PayloadFormat { .accessUnits }
  /// After every rendition's earlier segments: the renditions share one timeline.
  public var timelineStart: Int64? { renditions.compactMap { $0?.timelineStart }.max() }

  /// The largest sample the run admits (`holdSamples`): the video packetizer's buffer takes it.
  private var largestSample = 0

  public var bufferBytes: Int { bufferBytes(forSamplesUpTo: largestSample) }

  /// Every rendition's buffers and, for TS renditions, each packetizer's: the video's takes the
  /// largest sample's packets, an audio one starts large enough for any AAC frame.
  public func bufferBytes(forSamplesUpTo maximumSampleBytes: Int) -> Int {
    var bytes = renditions.reduce(0) {
      $0 + ($1?.bufferBytes(forSamplesUpTo: maximumSampleBytes) ?? 0)
    }
    guard configuration.container == .transportStream else { return bytes }
    for rendition in HLSRendition.allCases where renditions[rendition.rawValue] != nil {
      bytes += HLSRenditionPacketizer.bufferBytes(
        forSamplesUpTo: rendition == .video ? maximumSampleBytes : 0)
    }
    return bytes
  }

  public func holdSamples(upTo maximumSampleBytes: Int) {
    largestSample = maximumSampleBytes
    for sink in renditions { sink?.holdSamples(upTo: maximumSampleBytes) }
  }

  public var congestion: Double { 0 }

  public var redactedDescription: String {
    "hls:" + HLSFileSystem.join(configuration.directory, configuration.playlistName)
      + " (video, app and mic renditions)"
  }

  public var acceptedBytes: Int64? {
    renditions.reduce(0) { $0 + ($1?.acceptedBytes ?? 0) }
  }

  public var unstoredUnits: [Int]? {
    var counts = Array(repeating: 0, count: SampleKind.allCases.count)
    for sink in renditions {
      for (kind, count) in (sink?.unstoredUnits ?? []).enumerated() { counts[kind] += count }
    }
    return counts
  }

  public var warnings: [String] { renditions.flatMap { $0?.warnings ?? [] } }

  public func open(tracks: TrackFormats) throws(SinkError) {
    self.tracks = tracks
    do {
      try HLSFileSystem.makeDirectories(configuration.directory)
    } catch {
      throw SinkError(file: error)
    }
    for rendition in HLSRendition.allCases {
      guard let sink = renditions[rendition.rawValue],
        let format = tracks.format(for: rendition.kind)
      else { continue }
      var only = TrackFormats()
      only.set(format, for: rendition.kind)
      if configuration.container == .transportStream {
        packetizers[rendition.rawValue] = HLSRenditionPacketizer(
          program: only, largestSample: rendition == .video ? largestSample : 0)
      }
      try sink.open(tracks: only)
    }
  }

  public func write(_ unit: OutgoingUnit, bytes: UnsafeRawBufferPointer, now: MonotonicInstant)
    throws(SinkError) -> SinkWriteResult
  {
    let rendition = HLSRendition(kind: unit.kind)
    guard let sink = renditions[rendition.rawValue] else { return .discarded(.notCarried) }
    if let format = unit.format { tracks.set(format, for: unit.kind) }
    let started = sink.openSegmentStart
    var unit = unit
    if rendition != .video {
      // Players match the renditions' segments by discontinuity sequence, so a discontinuity
      // of one audio track alone (its clock re-anchored) would put it out of step with the
      // video (playbin3 stops with an internal data stream error). The timeline keeps its
      // decode times increasing, so the audio needs none of its own; it takes the video's at
      // the cut that lines up with it.
      unit.isDiscontinuity = false
    }
    let result: SinkWriteResult
    if packetizers[rendition.rawValue] != nil {
      // An audio frame that will start a segment needs PAT and PMT in front of it.
      if let cut = sink.pendingCut, unit.dts >= cut { packetizers[rendition.rawValue]!.forcePSI() }
      var packetized = unit
      result =
        try packetizers[rendition.rawValue]!.packetize(unit, payload: bytes) {
          (prefixLength, packets) throws(SinkError) in
          packetized.prefixLength = prefixLength
          return try sink.write(packetized, bytes: packets, now: now)
        } ?? .discarded(.invalid)
    } else {
      result = try sink.write(unit, bytes: bytes, now: now)
    }
    if rendition == .video, let start = sink.openSegmentStart, start != started {
      for audio in [HLSRendition.app, .mic] {
        renditions[audio.rawValue]?.scheduleCut(
          at: start, discontinuity: sink.openSegmentIsDiscontinuity)
      }
    }
    return result
  }

  public func close() {
    for sink in renditions { sink?.close() }
  }

  /// Finishes every rendition (each playlist gets `EXT-X-ENDLIST`), then writes the
  /// multivariant playlist with the recording's bit rates.
  public func finish() throws(SinkError) {
    for sink in renditions { try sink?.finish() }
    try writeMultivariantPlaylist()
  }

  public func setStatusHandler(_ handler: @escaping @Sendable (String, JSONObject) -> Void) {
    for rendition in HLSRendition.allCases {
      guard let sink = renditions[rendition.rawValue] else { continue }
      sink.setStatusHandler { name, fields in
        var object = fields
        object.add("rendition", rendition.directoryName)
        handler(name, object)
      }
      observeSegments(of: rendition)
    }
  }

  /// Counts a completed segment into its rendition's bit rates, and writes the multivariant
  /// playlist once the video has a segment (a player can start then) and again when the peak
  /// bit rate grew past what it states.
  private func completed(_ segment: HLSSegment, of rendition: HLSRendition) {
    let index = rendition.rawValue
    segmentBytes[index] += segment.bytes
    segmentTicks[index] += segment.duration
    let bits = Int(segment.bytes * 8 * MediaTicks.perSecond / max(segment.duration, 1))
    peakBitsPerSecond[index] = max(peakBitsPerSecond[index], bits)
    guard rendition == .video || writtenBandwidth != nil else { return }
    let peak = peakBitsPerSecond[0] + max(peakBitsPerSecond[1], peakBitsPerSecond[2])
    if writtenBandwidth.map({ peak > $0 + $0 / 20 }) ?? true {
      try? writeMultivariantPlaylist()
    }
  }

  private func writeMultivariantPlaylist() throws(SinkError) {
    let average = (0..<3).map {
      Int(segmentBytes[$0] * 8 * MediaTicks.perSecond / max(segmentTicks[$0], 1))
    }
    let text = HLSRendition.multivariantPlaylist(
      tracks: tracks, playlistName: configuration.playlistName, bandwidth: peakBitsPerSecond,
      averageBandwidth: average)
    do {
      try HLSFileSystem.replace(
        HLSFileSystem.join(configuration.directory, configuration.playlistName), with: text)
      try HLSFileSystem.syncDirectory(configuration.directory)
    } catch {
      throw SinkError(file: error)
    }
    writtenBandwidth = peakBitsPerSecond[0] + max(peakBitsPerSecond[1], peakBitsPerSecond[2])
  }
}
