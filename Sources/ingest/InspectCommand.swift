import IngestCLI
import IngestCore
import IngestPOSIX
import IngestRuntime
import IngestSinks

/// `ingest inspect`: what a dump holds, and what is odd about its timestamps.
enum InspectCommand: Command {
  static let name = "inspect"
  static let summary = "show a dump's tracks, formats, duration, sample counts and anomalies"
  static let help = """
    usage: ingest inspect DUMP [--budget MB] [--json]

    Reads the whole dump once (with bounded memory) and prints its tracks and their formats,
    the duration, sample and keyframe counts, bit rates, the largest gaps, events (audio
    interruptions), and timestamp anomalies: decode times that do not increase, clocks that jump
    backwards (or, for audio, forward by more than a second), PTS before DTS, invalid records;
    and what a producer sent that a replay mends or refuses: AAC samples with ADTS headers
    (removed, or refused when the header contradicts the AudioSpecificConfig), video samples
    with Annex B start codes instead of length prefixes (refused), video frames after a
    format record before any keyframe (dropped, awaiting one), and samples above the
    largest a replay into a .ts file takes at the budget (refused as too large).

    options:
      --budget MB   the replay budget the sample-size check assumes, as `ingest replay
                    --budget` (default 50)
      --json        print the result as one JSON object
      -h, --help    show this help

    exit status: 0 ok (anomalies are reported, not errors), 1 unreadable or corrupt dump, 2 usage
    """

  static func run(_ argv: [String]) throws -> Int32 {
    let args = try Arguments(argv, valued: ["--budget"], flags: ["--json"])
    guard args.positionals.count == 1 else { throw UsageError("expected one DUMP path") }
    let path = args.positionals[0]
    var options = ReplayOptions(target: .file(path: "out.ts", shaper: LinkShaper()))
    if let text = args["--budget"] {
      guard let megabytes = Double(text), (4...4096).contains(megabytes) else {
        throw UsageError("--budget must be a number of MB between 4 and 4096, got '\(text)'")
      }
      options.pipeline.budgetBytes = Int(megabytes * 1_000_000)
    }
    let source: FileByteSource
    do { source = try FileByteSource(path: path) } catch {
      Console.error("ingest inspect: \(error)")
      return 1
    }
    let inspection = DumpInspection(
      reading: source,
      sampleLimit: source.isRegularFile
        ? sampleLimit(path, options: options) : SampleSizeLimit.format)
    if let error = inspection.fatalError, refusedHeader(error) {
      // Nothing of it was read as a dump: a report of "0 bytes" and no tracks would mislead.
      if args.has("--json") {
        var object = JSONObject()
        object.add("dump", SystemPath.display(path))
        object.add("error", error.description)
        Console.out(object.rendered + "\n")
      }
      Console.error("ingest inspect: \(SystemPath.display(path)): \(error)")
      return 1
    }
    if args.has("--json") {
      Console.out(json(inspection, path: path).rendered + "\n")
    } else {
      Console.out(text(inspection, path: path))
    }
    if let error = inspection.fatalError {
      Console.error("ingest inspect: \(SystemPath.display(path)): \(error)")
      return 1
    }
    return 0
  }

  /// The largest sample a replay of the dump at `path` with `options` takes; the format's
  /// limit when the tracks are unknown or the budget holds nothing (the replay would say so
  /// itself). Reads the dump's start a second time: only for a regular file.
  static func sampleLimit(_ path: String, options: ReplayOptions) -> Int {
    guard let tracks = try? ReplaySession.trackFormats(dumpPath: path) else {
      return SampleSizeLimit.format
    }
    return (try? ReplaySession.maximumSampleBytes(tracks: tracks, options: options))
      ?? SampleSizeLimit.format
  }

  /// Whether reading stopped at the file header: the file is not a dump (of a known version).
  static func refusedHeader(_ error: DumpError) -> Bool {
    switch error {
    case .badMagic, .unsupportedVersion: true
    default: false
    }
  }

  static func describe(_ format: FormatDescription?) -> String {
    switch format {
    case .h264(let h264)?:
      "H.264 profile \(h264.profile) level \(h264.level), NAL length \(h264.nalLengthSize), "
        + "\(h264.sps.count) SPS, \(h264.pps.count) PPS"
    case .hevc(let hevc)?:
      "HEVC \(hevc.sequence.profileName), \(hevc.sequence.isHighTier ? "High" : "Main") tier, "
        + "level \(hevc.sequence.levelName), \(hevc.sequence.width)x\(hevc.sequence.height), "
        + "NAL length \(hevc.nalLengthSize), \(hevc.vps.count) VPS, \(hevc.sps.count) SPS, "
        + "\(hevc.pps.count) PPS"
    case .aac(let aac)?:
      "AAC object type \(aac.objectType), \(aac.sampleRate) Hz, \(aac.channels) ch"
    case nil: "no format record"
    }
  }

  static func seconds(_ ticks: Int64) -> String {
    JSONObject.fixed(MediaTicks(ticks).inSeconds, decimals: 3)
  }

  static func text(_ inspection: DumpInspection, path: String) -> String {
    var out = "\(SystemPath.display(path)): \(inspection.bytes) bytes\n"
    let present = inspection.tracks.filter { $0.samples > 0 || $0.format != nil }
    for track in present {
      let rate =
        track.duration > 0
        ? Double(track.bytes) * 8 * Double(MediaTicks.perSecond) / Double(track.duration) / 1e3 : 0
      out += "\(track.kind.description.padding(to: 9)) \(describe(track.format))\n"
      out +=
        "          \(track.samples) samples, \(track.keyframes) keyframes, "
        + "\(seconds(track.duration)) s, \(track.bytes) bytes (\(JSONObject.fixed(rate, decimals: 0)) kb/s), "
        + "largest \(track.largestSample) bytes, largest gap \(seconds(track.largestGap)) s\n"
      if track.reordered > 0 {
        out += "          \(track.reordered) samples with DTS != PTS (B-frames)\n"
      }
      if track.formatChanges > 0 {
        out += "          format changed \(track.formatChanges) time(s)\n"
      }
    }
    for event in inspection.events {
      let name =
        switch event {
        case .audioInterruptionBegan: "audio interruption began"
        case .audioInterruptionEnded: "audio interruption ended"
        }
      let time = TimeConversion.ticks90k(event.time).map { seconds($0) } ?? "\(event.time)"
      out += "event     \(event.kind): \(name) at \(time) s\n"
    }
    var anomalies: [String] = []
    for track in present {
      for jump in track.clockJumps {
        anomalies.append(
          "\(track.kind): clock jumped \(seconds(jump.jump)) s at sample \(jump.sample) (byte \(jump.offset))"
        )
      }
      if track.nonIncreasingDTS > 0 {
        anomalies.append("\(track.kind): \(track.nonIncreasingDTS) decode time(s) not increasing")
      }
      if track.ptsBeforeDTS > 0 {
        anomalies.append("\(track.kind): \(track.ptsBeforeDTS) PTS before DTS")
      }
      anomalies += producerAnomalies(track, sampleLimit: inspection.sampleLimit)
    }
    if inspection.invalidRecords > 0 {
      anomalies.append("\(inspection.invalidRecords) invalid record(s) skipped")
      for error in inspection.invalidExamples.prefix(5) { anomalies.append("  \(error)") }
    }
    if inspection.skippedRecords > 0 {
      anomalies.append("\(inspection.skippedRecords) record(s) of unknown type skipped")
    }
    if let error = inspection.fatalError { anomalies.append("reading stopped: \(error)") }
    out +=
      "anomalies "
      + (anomalies.isEmpty
        ? "none\n" : "\n" + anomalies.map { "  " + $0 }.joined(separator: "\n") + "\n")
    return out
  }

  /// What the producer sent that a replay mends or refuses, one line each.
  static func producerAnomalies(_ track: DumpInspection.Track, sampleLimit: Int) -> [String] {
    var lines: [String] = []
    let kind = track.kind
    if track.adtsHeaders > track.adtsMismatches {
      lines.append(
        "\(kind): \(track.adtsHeaders - track.adtsMismatches) samples carry ADTS headers "
          + "(raw AAC expected; a replay removes them)")
    }
    if let mismatch = track.adtsMismatch {
      lines.append(
        "\(kind): \(track.adtsMismatches) samples with ADTS headers refused: \(mismatch)")
    }
    if track.annexBSamples > 0 {
      lines.append(
        "\(kind): \(track.annexBSamples) samples carry Annex B start codes instead of length "
          + "prefixes (refused)")
    }
    if let first = track.firstFrameBeforeKeyframe {
      lines.append(
        "\(kind): \(track.framesBeforeKeyframe) frames follow a format record before any "
          + "keyframe (\(track.formatsBeforeNonKeyframe) record(s), the first such frame is "
          + "sample \(first)); a replay drops them, awaiting a keyframe to decode from")
    }
    if let timescale = track.coarsestTimescale {
      lines.append(
        "\(kind): \(track.coarseClockSamples) samples on a clock coarser than one frame "
          + "(timescale \(timescale)); a replay places them from the sample count and rate")
    }
    if track.oversizedSamples > 0 {
      lines.append(
        "\(kind): \(track.oversizedSamples) samples above \(sampleLimit) bytes, the largest a "
          + "replay takes at the budget (largest \(track.largestSample) bytes; "
          + "--budget raises the limit up to \(SampleSizeLimit.format))")
    }
    return lines
  }

  static func json(_ inspection: DumpInspection, path: String) -> JSONObject {
    var object = JSONObject()
    object.add("dump", SystemPath.display(path))
    object.add("bytes", inspection.bytes)
    var tracks: [JSONObject] = []
    for track in inspection.tracks where track.samples > 0 || track.format != nil {
      var entry = JSONObject()
      entry.add("kind", track.kind.description)
      entry.add("format", describe(track.format))
      if case .hevc(let hevc)? = track.format {
        entry.add("codec", "hevc")
        entry.add("profile", hevc.sequence.profileName)
        entry.add("tier", hevc.sequence.isHighTier ? "High" : "Main")
        entry.add("level", hevc.sequence.levelName)
        entry.add("width", hevc.sequence.width)
        entry.add("height", hevc.sequence.height)
      }
      entry.add("samples", track.samples)
      entry.add("keyframes", track.keyframes)
      entry.add("bytes", track.bytes)
      entry.add("duration_s", MediaTicks(track.duration).inSeconds)
      entry.add("largest_gap_s", MediaTicks(track.largestGap).inSeconds)
      entry.add("reordered", track.reordered)
      entry.add("non_increasing_dts", track.nonIncreasingDTS)
      entry.add("pts_before_dts", track.ptsBeforeDTS)
      entry.add("adts_headers", track.adtsHeaders)
      entry.add("adts_refused", track.adtsMismatches)
      entry.add("annex_b_samples", track.annexBSamples)
      entry.add("frames_before_keyframe", track.framesBeforeKeyframe)
      entry.add("oversized_samples", track.oversizedSamples)
      entry.add("coarse_clock_samples", track.coarseClockSamples)
      entry.add(
        "clock_jumps",
        track.clockJumps.map { jump in
          var item = JSONObject()
          item.add("sample", jump.sample)
          item.add("offset", jump.offset)
          item.add("jump_s", MediaTicks(jump.jump).inSeconds)
          return item
        })
      tracks.append(entry)
    }
    object.add("tracks", tracks)
    object.add("events", inspection.events.count)
    object.add("invalid_records", inspection.invalidRecords)
    // The same reasons as the text's anomalies.
    object.add(
      "invalid",
      inspection.invalidExamples.prefix(5).map { error in
        var item = JSONObject()
        item.add("reason", error.description)
        return item
      })
    object.add("skipped_records", inspection.skippedRecords)
    object.add("max_sample_bytes", inspection.sampleLimit)
    object.add(
      "producer_anomalies",
      inspection.tracks.flatMap { producerAnomalies($0, sampleLimit: inspection.sampleLimit) })
    if let error = inspection.fatalError { object.add("error", error.description) }
    return object
  }
}
