import Foundation
import IngestTestSupport

/// One channel of an audio stream decoded by ffmpeg to 32-bit float at 48 kHz, with the start
/// times ffprobe reads for the file's streams: what the tone tests measure a received copy by.
struct DecodedAudio {
  static let sampleRate = 48_000

  /// The channel's samples from the stream's first decoded sample.
  var samples: [Float]
  /// Where the audio stream starts, in seconds of the file's timeline.
  var start: Double
  /// Where the file's video starts, in seconds of the same timeline (nil without video).
  var videoStart: Double?
  /// The presentation time of every packet of the audio stream, in seconds.
  var packetTimes: [Double]

  /// Decodes `channel` of the audio stream `stream` (ffmpeg's `0:a:N`) of `path` (a .ts, an
  /// .flv, an HLS playlist), writing the samples into `directory`.
  init(_ path: String, stream: Int = 0, channel: Int = 0, in directory: URL) throws {
    let output = directory.appending(path: "decoded-\(UUID().uuidString).f32")
    let decode = try CommandRunner.run(
      "ffmpeg",
      [
        "-nostdin", "-v", "error", "-i", path, "-map", "0:a:\(stream)", "-af",
        "pan=mono|c0=c\(channel)", "-ar", "\(Self.sampleRate)", "-f", "f32le", "-y", output.path,
      ])
    guard decode.status == 0 else {
      throw LoopbackServers.Failure("ffmpeg could not decode \(path): \(decode.stderr)")
    }
    let data = try Data(contentsOf: output)
    samples = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    let probe = try CommandRunner.run(
      "ffprobe",
      [
        "-v", "error", "-show_entries", "stream=codec_type,start_time", "-of", "csv=p=0", path,
      ])
    var audioStarts: [Double] = []
    var videoStart: Double?
    for line in probe.stdout.split(separator: "\n") {
      let fields = line.split(separator: ",")
      guard fields.count >= 2, let time = Double(fields[1]) else { continue }
      if fields[0] == "audio" { audioStarts.append(time) }
      if fields[0] == "video" && videoStart == nil { videoStart = time }
    }
    guard stream < audioStarts.count else {
      throw LoopbackServers.Failure("ffprobe found no audio stream \(stream) in \(path)")
    }
    start = audioStarts[stream]
    self.videoStart = videoStart
    let packets = try CommandRunner.run(
      "ffprobe",
      [
        "-v", "error", "-select_streams", "a:\(stream)", "-show_entries", "packet=pts_time", "-of",
        "csv=p=0", path,
      ])
    packetTimes = packets.stdout.split(separator: "\n").compactMap {
      Double($0.split(separator: ",").first ?? "")
    }
  }

  /// The whole seconds decoded.
  var seconds: Int { samples.count / Self.sampleRate }

  /// The one-second window that starts `second` seconds after the stream's start.
  func window(_ second: Int) -> ArraySlice<Float> {
    samples[second * Self.sampleRate..<(second + 1) * Self.sampleRate]
  }

  /// The amplitude of `frequency` in the window of `second`.
  func level(_ frequency: Double, second: Int) -> Double {
    ToneMeter.amplitude(of: frequency, in: window(second), sampleRate: Self.sampleRate)
  }

  /// The mean amplitude of `frequency` over the windows of `seconds`.
  func meanLevel(_ frequency: Double, seconds: Range<Int>) -> Double {
    seconds.map { level(frequency, second: $0) }.reduce(0, +) / Double(seconds.count)
  }

  /// The largest magnitude of any sample.
  var peak: Float { samples.lazy.map(abs).max() ?? 0 }

  /// Audio start less video start, in seconds: the A/V offset the file's timestamps give.
  var offsetFromVideo: Double? { videoStart.map { start - $0 } }

  /// The phase (in cycles) of `frequency` over one second that starts at file time `time`.
  func phase(_ frequency: Double, at time: Double) -> Double {
    let first = Int(((time - start) * Double(Self.sampleRate)).rounded())
    let window = samples[first..<first + Self.sampleRate]
    return ToneMeter.phase(of: frequency, in: window, sampleRate: Self.sampleRate)
  }
}
