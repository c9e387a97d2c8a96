import Foundation
import IngestCore
import IngestPOSIX
import IngestTestSupport
import Testing

@testable import IngestCapture

/// HEVC media files made once per test run with ffmpeg and libx265: hvc1 and hev1 mp4, mkv, ts.
enum HEVCCaptureMedia {
  struct Files: Sendable {
    let directory: String
    /// Parameter sets only in the hvcC.
    var hvc1: String { directory + "/hvc1.mp4" }
    /// Parameter sets in the hvcC and again in front of every IRAP in the samples.
    var hev1: String { directory + "/hev1.mp4" }
    var mkv: String { directory + "/hevc.mkv" }
    /// Annex B: parameter sets and delimiters in-band only.
    var ts: String { directory + "/hevc.ts" }
  }

  static let files: Files = {
    let directory = ProcessFixtureDirectory.make(prefix: "capture-hevc-tests")
    let files = Files(directory: directory)
    let common = ["-v", "error", "-nostdin", "-y", "-fflags", "+bitexact"]
    let source = [
      "-f", "lavfi", "-i", "testsrc2=size=160x288:rate=30", "-t", "2", "-c:v", "libx265",
      "-preset", "ultrafast", "-pix_fmt", "yuv420p",
    ]
    let params = "log-level=error:pools=1:frame-threads=1:info=0:keyint=30:min-keyint=30:bframes=2"
    ffmpeg(common + source + ["-x265-params", params, "-tag:v", "hvc1", files.hvc1])
    ffmpeg(
      common + source + [
        "-x265-params", params + ":repeat-headers=1", "-tag:v", "hev1", files.hev1,
      ])
    ffmpeg(common + ["-i", files.hvc1, "-c", "copy", files.mkv])
    ffmpeg(common + ["-i", files.hvc1, "-c", "copy", files.ts])
    return files
  }()

  /// A failed encode shows as missing files in the tests that read them.
  private static func ffmpeg(_ arguments: [String]) {
    _ = try? CommandRunner.run("ffmpeg", arguments, timeout: 60)
  }

  static func videoSamples(_ path: String) throws -> (formats: [HEVCFormat], samples: [MediaSample])
  {
    let capture = try MediaFileCapture(path: path)
    var formats: [HEVCFormat] = []
    var samples: [MediaSample] = []
    while let item = try capture.next() {
      switch item {
      case .format(.video, .hevc(let format)): formats.append(format)
      case .sample(let sample) where sample.kind == .video: samples.append(sample)
      default: break
      }
    }
    return (formats, samples)
  }
}

@Suite struct HEVCCaptureTests {
  typealias Media = HEVCCaptureMedia

  @Test func hvc1GivesTheHVCCAndSamplesWithoutParameterSets() throws {
    let (formats, samples) = try Media.videoSamples(Media.files.hvc1)
    let format = try #require(formats.first)
    #expect(formats.count == 1)
    #expect(format.sequence.width == 160 && format.sequence.height == 288)
    #expect(format.sequence.profileName == "Main")
    #expect(samples.count == 60)
    #expect(samples.filter(\.isKeyframe).count == 2)
    #expect(samples.contains { $0.dts != nil && $0.dts != $0.pts })
    for sample in samples {
      let summary = try sample.payload.withUnsafeBytes {
        try VideoFormat.hevc(format).summarize($0)
      }
      #expect(!summary.hasParameterSets)
      #expect(summary.containsIDR == sample.isKeyframe)
    }
  }

  /// hev1 repeats its parameter sets in the samples, Annex B carries them only there; both come
  /// out as the hvc1 file does: the same configuration, the same sample bytes.
  @Test(arguments: ["hev1", "mkv", "ts"]) func otherFormsGiveTheSameSamples(_ form: String)
    throws
  {
    let files = Media.files
    let path = form == "hev1" ? files.hev1 : form == "mkv" ? files.mkv : files.ts
    let (referenceFormats, reference) = try Media.videoSamples(files.hvc1)
    let (formats, samples) = try Media.videoSamples(path)
    #expect(formats.count == 1)
    #expect(formats.first?.vps == referenceFormats.first?.vps)
    #expect(formats.first?.sps == referenceFormats.first?.sps)
    #expect(formats.first?.pps == referenceFormats.first?.pps)
    #expect(samples.map(\.isKeyframe) == reference.map(\.isKeyframe))
    if form != "hev1" {
      #expect(samples.map(\.payload) == reference.map(\.payload))
    } else {
      // Another encode (with repeated headers): same structure, sets moved out of the samples.
      #expect(samples.count == reference.count)
      let format = try #require(formats.first)
      for sample in samples {
        let summary = try sample.payload.withUnsafeBytes {
          try VideoFormat.hevc(format).summarize($0)
        }
        #expect(!summary.hasParameterSets)
      }
    }
  }

  @Test func annexBCaptureWritesAnHEVCDumpThatReadsBack() throws {
    let (formats, samples) = try Media.videoSamples(Media.files.ts)
    let path = Media.files.directory + "/roundtrip.dump"
    let sink = try FileWriter(path: path, bufferCapacity: 1000)
    var writer = try DumpWriter(sink: sink)
    try writer.writeFormat(.hevc(formats[0]), for: .video)
    for sample in samples { try writer.writeSample(sample) }
    try sink.close()
    var reader = DumpReader(source: try FileByteSource(path: path))
    #expect(try reader.next() == .format(.video, .hevc(formats[0])))
    var read: [MediaSample] = []
    while let record = try reader.next() {
      if case .sample = record, let sample = reader.sampleCopy() { read.append(sample) }
    }
    #expect(read.map(\.payload) == samples.map(\.payload))
  }
}
