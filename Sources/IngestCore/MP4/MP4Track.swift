/// One track of a fragmented MP4: which sample stream it carries, its id, its timescale and the
/// format its sample entry describes.
public struct MP4Track: Hashable, Sendable {
  /// The sample stream (video, app audio or mic audio); each gets a track of its own.
  public var kind: SampleKind
  /// The track_ID of `tkhd`, `trex` and `tfhd` (1-based, in `SampleKind` order).
  public var id: UInt32
  /// Ticks per second: 90 kHz for video (the pipeline's clock, so no conversion loses
  /// anything), the sample rate for audio (so an AAC frame lasts exactly 1024 ticks).
  public var timescale: UInt32
  /// The codec configuration written into the sample entry.
  public var format: FormatDescription

  public init(kind: SampleKind, id: UInt32, format: FormatDescription) {
    self.kind = kind
    self.id = id
    self.format = format
    switch format {
    case .aac(let aac): timescale = UInt32(aac.sampleRate)
    case .h264, .hevc: timescale = UInt32(MediaTicks.perSecond)
    }
  }

  /// One track per stream present in `tracks`, numbered in `SampleKind` order.
  public static func tracks(for tracks: TrackFormats) -> [MP4Track] {
    var result: [MP4Track] = []
    for kind in SampleKind.allCases {
      guard let format = tracks.format(for: kind) else { continue }
      result.append(MP4Track(kind: kind, id: UInt32(result.count + 1), format: format))
    }
    return result
  }

  /// The duration given to a track's last sample in a fragment when nothing follows it yet: one
  /// AAC frame for audio, a 30 fps frame for video (the previous interval is used when known).
  public var nominalSampleDuration: UInt32 {
    switch format {
    case .aac: 1024
    case .h264, .hevc: 3000
    }
  }

  /// Converts a 90 kHz time to this track's timescale, rounding to the nearest tick: the
  /// timeline rounded each audio time to 90 kHz, so rounding back restores the sample count.
  public func ticks(from time90k: Int64) -> Int64 {
    if timescale == MediaTicks.perSecond { return time90k }
    let scale = Int64(timescale)
    let product = time90k * scale
    let half = product >= 0 ? MediaTicks.perSecond / 2 : -MediaTicks.perSecond / 2
    return (product + half) / MediaTicks.perSecond
  }

  /// The picture size for `tkhd` and the visual sample entry, from the first SPS.
  var pictureSize: (width: Int, height: Int) {
    switch format {
    case .h264(let h264):
      let size = h264.sps.first.flatMap { H264PictureSize(sps: $0) }
      return (size?.width ?? 0, size?.height ?? 0)
    case .hevc(let hevc): return (hevc.sequence.width, hevc.sequence.height)
    case .aac: return (0, 0)
    }
  }

  /// The `hdlr` name: which of the streams this is, so a player lists them apart.
  var handlerName: String {
    switch kind {
    case .video: "Video"
    case .audioApp: "App audio"
    case .audioMic: "Microphone"
    }
  }
}
