import IngestCLI
import IngestCapture
import IngestCore
import IngestPOSIX
import IngestRuntime

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `ingest capture`: turns a media file into a captured-sample dump.
enum CaptureCommand: Command {
  static let name = "capture"
  static let summary = "turn a media file (mp4, mov, flv, ts, mkv) into a sample dump"
  static let help = """
    usage: ingest capture INPUT -o OUT.dump [options]

    Demuxes INPUT with libavformat and writes the H.264 or HEVC and AAC samples as a ReplayKit
    broadcast extension would receive them after its encoders: length-prefixed video with its
    avcC or hvcC (parameter sets only there), raw AAC frames with their AudioSpecificConfig, in
    decode order, interleaved by time across tracks. Annex B video (MPEG-TS) is re-framed with
    4-byte NAL lengths, and in-band parameter sets (Annex B, hev1) move into the configuration;
    ADTS headers are stripped. The format is described in docs/dump-format.md.

    options:
      -o, --output OUT.dump     where to write the dump (required); an existing file is
                                refused unless -y is given
      -y, --force               overwrite OUT.dump if it exists
      --video N|none            input stream index of the screen video (default: first video)
      --app-audio N|none        input stream index of the app audio (default: first audio)
      --mic-audio N|none        input stream index of the mic audio (default: second audio)
      --clock host|zero         host (default): timestamps like an iOS host clock, a fixed base of
                                352417.123456789 s plus the input time, timescale 1000000000,
                                converted exactly with integer arithmetic;
                                zero: the container's own timestamps at each stream's time base
      --mic-clock-jump S@AT     simulate an audio interruption such as a phone call: from AT
                                seconds after the first mic sample on, mic timestamps jump by S
                                seconds (may be negative, e.g. -3@4 or 12.5@5); event records mark
                                where the interruption began and ended
      -h, --help                show this help

    A packet the demuxer or the converter refuses (a NAL length past its end, say) is skipped
    and counted ("corrupt packets skipped"); video then waits for the next keyframe. An
    interrupted capture (a signal, a read error) leaves a dump that ends at a whole record.

    exit status: 0 ok, 1 the input could not be read or converted (a track whose codec is
    not H.264, HEVC or AAC: leave it out with --video none, --app-audio none or --mic-audio
    none), 2 bad usage

    example:
      ingest capture screen.mp4 -o Fixtures/screen.dump --mic-audio none
    """

  static func run(_ argv: [String]) throws -> Int32 {
    let arguments = try Arguments(
      argv,
      valued: [
        "-o", "--output", "--video", "--app-audio", "--mic-audio", "--clock", "--mic-clock-jump",
      ],
      flags: ["-y", "--force"])
    guard arguments.positionals.count == 1, let input = arguments.positionals.first else {
      throw UsageError(
        arguments.positionals.isEmpty ? "missing INPUT" : "only one INPUT is allowed")
    }
    guard let output = arguments["-o"] ?? arguments["--output"] else {
      throw UsageError("missing -o OUT.dump")
    }
    if SameFileCheck.isSameFile(input, output) {
      throw UsageError(
        "-o \(SystemPath.display(output)) is the input \(SystemPath.display(input)):"
          + " it would be overwritten")
    }
    if !(arguments.has("-y") || arguments.has("--force")), isRegularFile(output) {
      throw UsageError(
        "-o \(SystemPath.display(output)) exists: add -y (or --force) to overwrite it,"
          + " or choose another name")
    }
    let video = try choice(arguments, "--video")
    let app = try choice(arguments, "--app-audio")
    let mic = try choice(arguments, "--mic-audio")
    let clock: CaptureClock
    switch arguments["--clock"] ?? "host" {
    case "host": clock = .host
    case "zero": clock = .zero
    case let other: throw UsageError("--clock must be host or zero, got '\(other)'")
    }
    var jump: MicClockJump?
    if let text = arguments["--mic-clock-jump"] {
      guard let parsed = MicClockJump(parsing: text) else {
        throw UsageError("--mic-clock-jump must be SECONDS@AT, e.g. -3@4, got '\(text)'")
      }
      jump = parsed
    }

    let capture: MediaFileCapture
    do {
      capture = try MediaFileCapture(
        path: input, video: video, appAudio: app, micAudio: mic, clock: clock, micClockJump: jump)
    } catch {
      switch error {
      case .noSuchStream, .unsupportedStream, .nothingSelected: throw UsageError("\(error)")
      case .unsupportedCodec(_, let kind, _):
        // The input is fine as a file, but this track cannot be converted: runtime, exit 1.
        let option = optionName(kind)
        Console.error(
          "ingest capture: \(error)\n  leave the track out with \(option) none,"
            + " or choose another stream with \(option) N")
        return 1
      default: throw error
      }
    }
    if jump != nil, capture.selection[.audioMic] == nil {
      throw UsageError("--mic-clock-jump needs a mic audio track")
    }
    let sink = try FileWriter(path: output)
    var writer = try DumpWriter(sink: sink)
    StopSignal.install()
    var stopSignal: String?
    do {
      while let item = try capture.next() {
        switch item {
        case .format(let kind, let format): try writer.writeFormat(format, for: kind)
        case .sample(let sample): try writer.writeSample(sample)
        case .event(let event): try writer.writeEvent(event)
        }
        // SIGINT/SIGTERM end the capture between records, so the dump ends on a whole one.
        stopSignal = StopSignal.requested
        if stopSignal != nil { break }
      }
    } catch {
      // The input failed between records: the writer's buffer holds whole records only, so
      // flushing it ends the aborted capture on a record boundary instead of a torn record. (A
      // failed write may have left part of a record in it: that is not flushed.)
      if error is CaptureError { try? sink.close() }
      throw error
    }
    try sink.close()

    var parts: [String] = []
    for kind in SampleKind.allCases {
      guard let stream = capture.selection[kind] else { continue }
      parts.append("\(kind) \(capture.sampleCounts[kind] ?? 0) (stream \(stream))")
    }
    let duration = capture.durationNanoseconds
    let millis = (duration + 500_000) / 1_000_000
    let seconds =
      "\(millis / 1000).\(String(repeating: "0", count: 3 - String(millis % 1000).count))\(millis % 1000)"
    var line =
      "\(SystemPath.display(output)): " + parts.joined(separator: ", ")
      + ", \(seconds) s, \(writer.offset) bytes"
    if capture.droppedPackets > 0 { line += ", \(capture.droppedPackets) packets skipped" }
    if capture.corruptPackets > 0 {
      line += ", \(capture.corruptPackets) corrupt packets skipped"
    }
    if let stopSignal { line += ", stopped by \(stopSignal)" }
    Console.out(line + "\n")
    return 0
  }

  /// Whether `path` is an existing regular file, which a capture would overwrite (a FIFO or a
  /// device such as /dev/null loses nothing by being written).
  private static func isRegularFile(_ path: String) -> Bool {
    var info = stat()
    guard SystemPath.withCString(path, { stat($0, &info) }) == 0 else { return false }
    return info.st_mode & S_IFMT == S_IFREG
  }

  /// The option that chooses the stream of the `kind` track.
  private static func optionName(_ kind: SampleKind) -> String {
    switch kind {
    case .video: "--video"
    case .audioApp: "--app-audio"
    case .audioMic: "--mic-audio"
    }
  }

  private static func choice(_ arguments: Arguments, _ name: String) throws(UsageError)
    -> StreamChoice
  {
    guard let text = arguments[name] else { return .automatic }
    if text == "none" { return .none }
    guard let index = Int(text), index >= 0 else {
      throw UsageError("\(name) must be a stream index or none, got '\(text)'")
    }
    return .index(index)
  }
}
