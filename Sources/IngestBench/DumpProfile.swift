import IngestCore
import IngestPOSIX
import IngestRuntime

/// What the benchmark needs to know of a dump before it plays it: its tracks, span, bit rates,
/// and a copy of its video keyframes (for keyframe-heavy input).
public struct DumpProfile: Sendable {
  /// The track formats the dump announces.
  public var tracks: TrackFormats
  /// Earliest and latest timestamp of any sample, nanoseconds.
  public var firstNanoseconds: Int64 = .max
  public var lastNanoseconds: Int64 = .min
  /// Typical spacing of video frames (the last one seen), nanoseconds; 1/30 s without video.
  public var frameInterval: Int64 = 33_333_333
  /// Samples in one pass.
  public var samples = 0
  /// Encoded payload bytes in one pass.
  public var payloadBytes: Int64 = 0
  /// Transport-stream bytes our writer makes of one pass (unit packets, without PSI/PCR).
  public var transportBytes: Int64 = 0
  /// The payloads of the video keyframes (AVCC), in order.
  public var keyframes: [[UInt8]] = []

  /// How far one pass is shifted from the previous when the dump is looped: the span plus one
  /// frame, so every track's timestamps keep rising across the seam.
  public var loopPeriod: Int64 { max(1, lastNanoseconds - firstNanoseconds) + frameInterval }

  /// Seconds of content in one pass.
  public var seconds: Double { TimeSpan(nanoseconds: loopPeriod).inSeconds }

  /// Bits per second of the transport stream (2 % added for PAT/PMT/PCR packets).
  public var transportBitsPerSecond: Int64 {
    Int64(Double(transportBytes) * 8 * 1.02 / seconds)
  }

  /// Reads the whole dump once.
  /// - Parameter keepKeyframes: at most this many keyframe payloads are copied.
  public init(path: String, keepKeyframes: Int = 0) throws(ReplayError) {
    tracks = try ReplaySession.trackFormats(dumpPath: path)
    let source: FileByteSource
    do { source = try FileByteSource(path: path) } catch { throw .open(error) }
    var reader = DumpReader(source: source)
    let packetizer = TSPacketizer(program: tracks)
    let largest = PipelineConfiguration().maximumSampleBytes
    var scratchBytes = 188
    for kind in SampleKind.allCases {
      guard let format = tracks.format(for: kind) else { continue }
      scratchBytes = max(
        scratchBytes,
        TSPacketizer.maximumPacketizedSize(payloadSize: largest, kind: kind, format: format))
    }
    let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: scratchBytes, alignment: 16)
    defer { scratch.deallocate() }
    var lastVideo: Int64?
    while true {
      let record: DumpRecord?
      do { record = try reader.next() } catch {
        if error.isRecoverable { continue }
        if samples > 0 { break }
        throw .dump(path: path, error)
      }
      guard let record else { break }
      guard case .sample(let header) = record else { continue }
      let time = Self.nanoseconds(header.dts ?? header.pts)
      let presented = Self.nanoseconds(header.pts)
      firstNanoseconds = min(firstNanoseconds, time, presented)
      lastNanoseconds = max(lastNanoseconds, time, presented)
      if header.kind == .video {
        if let lastVideo, time > lastVideo { frameInterval = time - lastVideo }
        lastVideo = time
      }
      samples += 1
      payloadBytes += Int64(header.payloadSize)
      let ticks = TimeConversion.ticks90k(header.dts ?? header.pts) ?? 0
      let ptsTicks = TimeConversion.ticks90k(header.pts) ?? ticks
      reader.withPayload { payload in
        if header.kind == .video && header.isKeyframe && keyframes.count < keepKeyframes {
          keyframes.append(Array(payload))
        }
        guard payload.count <= largest,
          let unit = try? packetizer.packetize(
            kind: header.kind, pts: ptsTicks, dts: ticks, isKeyframe: header.isKeyframe,
            payload: payload, into: scratch)
        else { return }
        transportBytes += Int64(unit.byteCount)
      }
    }
    guard samples > 0 else { throw .noTracks(path: path) }
  }

  /// A time in nanoseconds, exact for any timescale (no overflow for large host-clock values).
  static func nanoseconds(_ time: MediaTime) -> Int64 {
    guard time.timescale > 0 else { return 0 }
    if time.timescale == MediaTime.nanosecondTimescale { return time.value }
    let product = time.value.multipliedFullWidth(by: TimeSpan.nanosecondsPerSecond)
    let (quotient, overflow) = Int64(time.timescale).dividingFullWidthReportingOverflow(product)
    return overflow ? (time.value < 0 ? .min : .max) : quotient
  }

  /// `nanoseconds` in units of `timescale` (rounded down), exact for large values.
  static func value(nanoseconds: Int64, timescale: Int32) -> Int64 {
    if timescale == MediaTime.nanosecondTimescale { return nanoseconds }
    let product = nanoseconds.multipliedFullWidth(by: Int64(timescale))
    let (quotient, overflow) = TimeSpan.nanosecondsPerSecond.dividingFullWidthReportingOverflow(
      product)
    return overflow ? .max : quotient
  }
}

extension Int64 {
  fileprivate func dividingFullWidthReportingOverflow(_ dividend: (high: Int64, low: UInt64)) -> (
    Int64, Bool
  ) {
    // The quotient fits when |high| is well below the divisor.
    let limit = self.magnitude >> 1
    guard dividend.high.magnitude < limit else { return (0, true) }
    return (dividingFullWidth(dividend).quotient, false)
  }
}
