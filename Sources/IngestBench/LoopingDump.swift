import IngestCore
import IngestPOSIX
import IngestRuntime

/// Plays a dump as a longer stream: at its end the file is read again from the start with every
/// timestamp shifted by `DumpProfile.loopPeriod`, so each track's timestamps keep rising.
///
/// For keyframe-heavy input, video samples inside a burst window are replaced by the dump's own
/// keyframes (valid IDR access units) in turn, flagged as keyframes.
struct LoopingDump {
  /// A window of keyframe-only video: `length` at the start of every `period` of content.
  struct Burst {
    var period: TimeSpan
    var length: TimeSpan
  }

  let path: String
  let profile: DumpProfile
  let burst: Burst?
  private var reader: DumpReader<FileByteSource>
  private var offset: Int64 = 0
  private var keyframeIndex = 0
  private var substitute: Int?
  /// Passes started so far (1 during the first pass).
  private(set) var pass = 1
  /// The current sample, timestamps shifted.
  private(set) var header = DumpSampleHeader(
    kind: .video, pts: MediaTime(value: 0, timescale: 1), dts: nil, isKeyframe: false,
    payloadSize: 0)
  /// Decode time of the current sample from the first sample of the first pass, nanoseconds.
  private(set) var contentTime: Int64 = 0

  init(path: String, profile: DumpProfile, burst: Burst? = nil) throws(ReplayError) {
    self.path = path
    self.profile = profile
    self.burst = burst
    reader = try Self.open(path)
  }

  private static func open(_ path: String) throws(ReplayError) -> DumpReader<FileByteSource> {
    do { return DumpReader(source: try FileByteSource(path: path), checksum: .cpu) } catch {
      throw .open(error)
    }
  }

  /// Moves to the next sample, starting a new pass at the end of the file.
  /// - Returns: false only when a whole pass yielded no sample.
  mutating func next() throws(ReplayError) -> Bool {
    var emptyPasses = 0
    while true {
      let record: DumpRecord?
      do { record = try reader.next() } catch {
        if error.isRecoverable { continue }
        throw .dump(path: path, error)
      }
      guard let record else {
        emptyPasses += 1
        guard emptyPasses < 2 else { return false }
        reader = try Self.open(path)
        offset += profile.loopPeriod
        pass += 1
        continue
      }
      guard case .sample(var sample) = record else { continue }
      emptyPasses = 0
      sample.pts.value &+= DumpProfile.value(nanoseconds: offset, timescale: sample.pts.timescale)
      if var dts = sample.dts {
        dts.value &+= DumpProfile.value(nanoseconds: offset, timescale: dts.timescale)
        sample.dts = dts
      }
      contentTime = DumpProfile.nanoseconds(sample.dts ?? sample.pts) - profile.firstNanoseconds
      substitute = nil
      if let burst, sample.kind == .video, !profile.keyframes.isEmpty,
        contentTime % burst.period.nanoseconds < burst.length.nanoseconds
      {
        let index = keyframeIndex % profile.keyframes.count
        keyframeIndex += 1
        substitute = index
        sample.isKeyframe = true
        sample.payloadSize = profile.keyframes[index].count
        // Another payload: the pipeline walks it itself.
        sample.nalUnits = nil
      }
      header = sample
      return true
    }
  }

  /// Calls `body` with the current sample's bytes (valid only during the call).
  func withPayload<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
    if let substitute { return profile.keyframes[substitute].withUnsafeBytes(body) }
    return reader.withPayload(body)
  }
}
