import IngestCLI
import IngestCore
import IngestPOSIX
import IngestRuntime
import IngestSinks

#if canImport(Glibc)
  import Glibc
#endif

/// `ingest replay`: plays a dump through the pipeline into an output, as a live capture would.
enum ReplayCommand: Command {
  static let name = "replay"
  static let summary = "replay a sample dump into a .ts or .mp4 file, SRT, RTMP(S), HLS or null"
  static let help = """
    usage: ingest replay DUMP --to OUTPUT [options]

    Replays the samples of DUMP through the memory-bounded pipeline: 90 kHz timeline, our own
    MPEG-TS writer (or access units for RTMP), the bounded send ring with its drop policy and
    degradation ladder, and the output. When DUMP ends, the outputs get twice --buffer and 5 s
    more to take what the ring still holds; what an output still down has not taken by then is
    counted as undelivered.

    outputs (--to):
      PATH.ts, file:PATH        a transport stream file
      -, file:-                 the transport stream on standard output, e.g. --to - | ffplay -
                                (summary and progress stay on stderr; not with --json or
                                --status -; a file named - is file:./-)
      null:                     discard (for measurements)
      srt://HOST:PORT?...       SRT: latency=MS or latency=auto (caller: measure the round
                                trip before connecting, ask max(120, 4 x RTT) ms; a latency
                                under 3 x RTT is warned about on stderr), passphrase=..,
                                pbkeylen=16|24|32,
                                streamid=.., maxbw=.., conntimeo=MS (connect attempt limit,
                                default 3000), stall_timeout=S (reconnect when nothing is
                                acknowledged for S seconds while data waits, default 5),
                                mode=caller (default: connect to HOST:PORT), mode=listener
                                (bind HOST:PORT, wait for a caller, and for the next one after
                                it leaves), mode=rendezvous (meet a peer at HOST:PORT from the
                                local port=N, default PORT); passphrase_file=PATH and
                                streamid_file=PATH read the secret from a file, else
                                INGEST_SRT_PASSPHRASE and INGEST_SRT_STREAMID are used
      rtmp://HOST/APP/KEY       RTMP publish (rtmps:// for TLS; the server certificate is
                                verified against the system's CAs, or --ca-file): H.264 and
                                AAC in legacy FLV tags; HEVC in Enhanced RTMP tags (FourCC
                                hvc1), which the server must read (YouTube, FFmpeg 6.1 and
                                later; not nginx-rtmp, which drops them); the key may instead
                                come from rtmp://HOST/APP?key_file=PATH or INGEST_RTMP_KEY
                                (docs/secrets.md, docs/rtmp.md)
      whip+http://HOST/PATH     WHIP (WebRTC) publish through ingest-whip, a program of its
                                own (GStreamer webrtcbin): H.264 (HEVC where the endpoint's
                                answer takes it) in RTP, audio as Opus, one audio track
                                (app and mic mixed by default); whip+https:// for TLS; the
                                bearer token from ?token-file=PATH or INGEST_WHIP_TOKEN,
                                never the URL; the RTCP reports steer the encoder, the
                                receiver's NACKs are answered by retransmission (RTX,
                                a second of video kept, within the budget), and `sent`
                                counts what the receiver's reports say arrived. A
                                replay offers the dump's own H.264 profile: an endpoint
                                that refuses it ends the run with an error naming it and
                                the profiles the endpoint accepts (ingest live offers
                                several, ?profiles=; docs/whip.md)
      hls:DIR, DIR/NAME.m3u8    HLS segments and a live playlist in DIR; ?container=ts
                                (MPEG-TS segments, EXT-X-VERSION 3) or ?container=fmp4
                                (.m4s segments after an initNNNNN.mp4 that EXT-X-MAP names,
                                EXT-X-VERSION 7; a new one after a format change). Default:
                                fmp4 for HEVC (Apple's HLS authoring spec requires fMP4 for
                                HEVC), ts otherwise; &audio=both|mix|app|mic sets this
                                output's audio, over --audio (docs/hls.md)
      PATH.mp4, PATH.mov        a fragmented MP4 (QuickTime brand for .mov), one fragment
                                per GOP, every track kept; a run killed mid-way is made whole
                                by `ingest recover PATH.mp4`; a format change mid-run (the
                                device rotated) ends it with an error; locked while written,
                                so a second run naming it is refused (docs/mp4.md)
      An existing .ts, .mp4 or .mov file is refused unless -y is given.
      A .ts file or null output takes ?rate=800k (a token bucket at that bit rate) and
      ?stall=10s@5s (a 10 s outage starting 5 s in) to simulate a network, e.g.
      'congested.ts?rate=500k'.

    options:
      --to OUTPUT               where to send the stream (required); give it again for more
                                outputs in one run (e.g. an SRT push and an HLS recording):
                                each output has its own ring and drop policy under the one
                                budget, so a slow or failed output drops or fails alone
      --speed realtime|max|N    realtime (default) paces samples by their timestamps; max as fast
                                as possible; N times realtime, N above 0 and up to 1000. max to
                                srt://, rtmp:// or whip+http:// is paced to realtime: a live
                                receiver cannot take more
      --buffer SECONDS          longest buffered duration of the send ring, 2 to 5 (default 3)
      --budget MB               memory ceiling in MB of 10^6 bytes (default 50), at least
                                (--overhead + 6) / 0.8 (33 with the default overhead): the
                                overhead, the fixed buffers (dump reader, packager, output;
                                about 5 MB at the minimum) and 1 MB of ring under the ladder's
                                first threshold. It also bounds the largest sample: the dump
                                reader and each ring hold one under that threshold, at most the
                                format's 8388582 bytes (about 1.7 MB at 33; the start event's
                                max_sample_bytes). A larger sample is dropped as tooLarge,
                                named with its size and the limit
      --overhead MB             modelled OS/framework memory of an extension (default 20)
      --status FILE|-           write status events as JSON lines to FILE or standard output
                                (a FIFO must have its reader first, or the run is refused)
      --segment SECONDS         HLS only: segment target duration, 2 to 4 (default 2)
      --hls-window N            HLS only: segments in the live playlist, 0 (keeps all) or at
                                least 3, three target durations (RFC 8216 6.2.2) (default 6)
      --audio mix|app|mic|both  the audio every output carries when the dump has app and mic
                                audio: mix decodes both, mixes them (--mix-gain, a limiter:
                                never clipping) and encodes one AAC track at the app track's
                                rate and channels; app or mic sends that track alone; both
                                sends the two tracks (RTMP: the mic as Enhanced RTMP
                                multitrack audio, track 1; HLS: alternate audio renditions,
                                docs/hls.md).
                                Default: mix for RTMP and HLS (players play one audio track
                                beside the video), both for .ts, .mp4 and SRT, where the app
                                track comes first (the one players pick; editors see both).
                                The summary says what each output carried; give it once
      --mix-gain app=G,mic=G    gains of the mix, plain decimal numbers from 0 to 16, each
                                input named once (default app=1,mic=1); the ladder's mic
                                tier mutes the mic in the mix; a run in which nothing is
                                mixed says on stderr that the gains have no effect
      --ca-file PEM             rtmps and whip+https: trust the certificate authorities in PEM
                                instead of the system's (a private CA); a WHIP endpoint whose
                                certificate is not trusted ends the run (never retried)
      --insecure                rtmps only: do not verify the server certificate (tests)
      --min-delivered FRACTION  the run fails (exit 1, "ok": false) when the output accepted
                                less than this share of the video frames, 0 to 1 (default 0.5)
      -y, --force               overwrite a .ts, .mp4 or .mov output file that exists
                                (without it, an existing file is refused; never the input)
      --json                    print the summary as JSON on standard output (not with
                                --to -: --status FILE ends with the summary)
      --quiet                   no progress line
      -h, --help                show this help

    SIGINT, SIGTERM, SIGHUP (a closed terminal) and SIGUSR1 stop the run: every output is
    finished (drained for up to 5 s, the HLS playlist ended), the summary written, exit 0
    (1 when an output failed or delivered too little, as at the end of the input: an output
    that never connected before the stop is a failure). SIGQUIT stops at once without
    draining and exits 1. A second signal exits at once. A stop ends every wait: for input
    that does not come (a FIFO without a writer, a stalled producer: what came is finished as
    above), for a reader that takes nothing (--to - into a pipe nobody reads: its write is
    given up a second after the drain, exit 1), and for an encoder that does not end (killed
    5 s after it was asked to, exit 1).

    A producer's mistakes are mended or refused by name: AAC frames behind ADTS headers that
    match the track's AudioSpecificConfig lose them (a warning); a header that contradicts it
    is refused naming both values. Video in Annex B form (start codes instead of length
    prefixes) is refused as a track, left out of the output, and the run fails (exit 1).
    So is a track whose format record the outputs cannot carry (AAC-ELD, HE-AAC with its
    SBR signalled, a channel configuration of 0): refused by name, its samples dropped.

    exit status: 0 ok, 1 runtime error (bad dump, failed output, too little delivered), 2 usage.
    A dump without samples (only its header, or only format records) is valid and empty: the
    run says so, opens no output, writes nothing and exits 0 (--json: "empty": true).
    """

  /// The options `replay` and `live` share (everything but the input and `--speed`).
  static let runOptions: Set<String> = [
    "--to", "--buffer", "--budget", "--overhead", "--status", "--segment", "--hls-window",
    "--audio", "--mix-gain", "--min-delivered", "--ca-file",
  ]
  /// What the values of the shared options may be, said when one is missing.
  static let runOptionValues = ["--audio": "mix, app, mic or both"]
  /// The switches `replay` and `live` share.
  static let runFlags: Set<String> = ["--insecure", "-y", "--force"]

  static func run(_ argv: [String]) throws -> Int32 {
    let args = try Arguments(
      argv, valued: runOptions.union(["--speed"]), flags: runFlags.union(["--json", "--quiet"]),
      expecting: runOptionValues)
    guard args.positionals.count == 1 else { throw UsageError("expected one DUMP path") }
    let dump = args.positionals[0]
    var (options, status) = try parseRunOptions(args, input: dump)
    if let text = args["--speed"] {
      guard let speed = ReplaySpeed(text) else {
        throw UsageError(
          "--speed must be realtime, max or a number above 0 up to 1000, got '\(text)'")
      }
      options.speed = speed
    }
    let showProgress = !args.has("--quiet") && Console.stderrIsTerminal
    let total = showProgress ? DumpLength.duration(of: dump) : nil
    let link = linkFigures(&options, showProgress: showProgress)
    let clock = SystemClock()
    StopSignal.install()
    let summary: ReplaySummary
    do {
      summary = try ReplaySession.run(
        dumpPath: dump, options: options, clock: clock, senders: .threaded(clock)
      ) {
        snapshot, elapsed in
        if showProgress {
          Console.progress(progressLine(snapshot, elapsed: elapsed, total: total, link: link))
        }
      }
    } catch {
      if case .usage(let message) = error { throw UsageError(message) }
      Console.error("ingest replay: \(error)")
      if case .stoppedBeforeInput = error { return 0 }
      guard case .empty = error else { return 1 }
      // A valid dump without samples: nothing went wrong, and no output was touched.
      if args.has("--json") {
        var object = JSONObject()
        object.add("command", "replay")
        object.add("input", SystemPath.display(dump))
        object.add("ok", true)
        object.add("empty", true)
        Console.out(object.rendered + "\n")
      }
      return 0
    }
    if showProgress { Console.progress("") }
    return report(
      summary, command: "replay", input: dump, options: options, status: status,
      json: args.has("--json"))
  }

  /// Reads the options `replay` and `live` share into `ReplayOptions`, and opens `--status`.
  static func parseRunOptions(_ args: Arguments, input: String) throws -> (
    ReplayOptions, StatusOutput?
  ) {
    let outputs = args.values("--to")
    guard !outputs.isEmpty else { throw UsageError("--to OUTPUT is required") }
    var targets: [OutputTarget] = []
    for to in outputs {
      do { targets.append(try OutputTarget(parsing: to)) } catch {
        throw UsageError("--to: \(error)")
      }
    }
    try ReplayOptionChecks.checkDistinct(targets)
    // Before any secret is read: a crash must not write a passphrase or key to a core file.
    if OutputSecrets.present(in: targets) { CoreDumpGuard.forbidCoreDumps() }
    try OutputAccessCheck.checkStandardOutput(
      targets, json: args.has("--json"), status: args["--status"])
    // Writing over the input is refused even with -y: the run would destroy what it reads.
    for target in targets {
      do { try ReplaySession.refuseOverwritingInput(input, target: target) } catch {
        throw UsageError(error.description)
      }
    }
    try OutputAccessCheck.checkNotOverwriting(
      targets, overwrite: args.has("-y") || args.has("--force"))
    try OutputAccessCheck.checkWritable(targets)
    var options = ReplayOptions(targets: targets)
    if let text = args["--buffer"] {
      guard let seconds = Double(text), seconds >= 2, seconds <= 5 else {
        throw UsageError("--buffer must be between 2 and 5 seconds, got '\(text)'")
      }
      options.pipeline.bufferMilliseconds = Int(seconds * 1000)
    }
    if let budget = try megabytes(args, "--budget", in: 4...4096) {
      options.pipeline.budgetBytes = budget
    }
    if let overhead = try megabytes(args, "--overhead", in: 0...4096) {
      options.pipeline.overheadBytes = overhead
    }
    try ReplayOptionChecks.checkBudget(options.pipeline)
    try ReplayOptionChecks.checkHLSOnly(args, targets: options.targets)
    if let segment = try args.int("--segment", in: 2...4) { options.segmentSeconds = segment }
    if let window = try args.int("--hls-window", in: 0...10000) {
      try ReplayOptionChecks.checkWindow(window)
      options.hlsWindow = window
    }
    if let audio = try args.single("--audio") {
      guard let selection = AudioSelection(rawValue: audio) else {
        throw UsageError("--audio must be mix, app, mic or both, got '\(audio)'")
      }
      options.audio = selection
    }
    if let gains = try args.single("--mix-gain") {
      do { options.mixGains = try AudioMixGains(parsing: gains) } catch {
        throw UsageError("--mix-gain: \(error)")
      }
      options.mixGainsGiven = true
    }
    let caFile = args["--ca-file"]
    let insecure = args.has("--insecure")
    if caFile != nil || insecure {
      let rtmps = options.targets.contains { target in
        if case .rtmp(let url) = target { url.lowercased().hasPrefix("rtmps://") } else { false }
      }
      let whipOverTLS = options.targets.contains { target in
        if case .whip(let url) = target {
          url.lowercased().hasPrefix("whip+https://")
        } else {
          false
        }
      }
      guard rtmps || (whipOverTLS && !insecure) else {
        throw UsageError(
          insecure
            ? "--insecure applies to rtmps:// outputs only"
            : "--ca-file applies to rtmps:// and whip+https:// outputs only")
      }
      guard caFile == nil || !insecure else {
        throw UsageError("--ca-file and --insecure contradict each other: choose one")
      }
      // libavformat reports an unreadable CA file as a generic I/O error during the connect.
      if let caFile, SystemPath.withCString(caFile, { access($0, R_OK) }) != 0 {
        throw UsageError("--ca-file: cannot read '\(SystemPath.display(caFile))'")
      }
      options.caFile = caFile
      options.rtmpsVerifyPeer = !insecure
    }
    if let text = args["--min-delivered"] {
      guard let fraction = Double(text), fraction >= 0, fraction <= 1 else {
        throw UsageError("--min-delivered must be a fraction from 0 to 1, got '\(text)'")
      }
      options.minimumDeliveredFraction = fraction
    }
    // A warning (a latency too short for the path) is worth seeing while the run goes on.
    options.warningLine = { Console.error("ingest: warning: " + $0) }
    var status: StatusOutput?
    if let destination = args["--status"] {
      let output = try StatusOutput(destination: destination, input: input)
      options.statusLine = { output.write($0) }
      status = output
    }
    return (options, status)
  }

  /// Prints the summary (text on standard error, or `--json` on standard output) and the
  /// reasons a run failed; returns the exit status.
  static func report(
    _ summary: ReplaySummary, command: String, input: String, options: ReplayOptions,
    status: StatusOutput?, json: Bool
  ) -> Int32 {
    if json {
      var object = JSONObject()
      summary.fill(&object)
      Console.out(object.rendered + "\n")
    } else {
      Console.error(summaryText(summary, dump: input, options: options))
    }
    let prefix = "ingest \(command): "
    if let error = summary.readError {
      Console.error(prefix + "\(SystemPath.display(input)): \(error)")
    }
    for output in summary.outputs {
      let label = summary.label(output)
      if let error = output.sinkError { Console.error(prefix + label + "output failed: \(error)") }
      if let shortfall = output.shortfall { Console.error(prefix + label + shortfall) }
    }
    if let failure = summary.inputFailure { Console.error(prefix + failure) }
    if let refused = summary.refusedTrack { Console.error(prefix + refused) }
    if let stop = summary.immediateStop { Console.error(prefix + stop) }
    if let note = status?.closedNote { Console.error(prefix + note) }
    if let problem = status?.problem {
      Console.error(prefix + problem)
      return 1
    }
    return summary.succeeded ? 0 : 1
  }

  private static func megabytes(_ args: Arguments, _ name: String, in range: ClosedRange<Double>)
    throws(UsageError) -> Int?
  {
    guard let text = args[name] else { return nil }
    guard let value = Double(text), range.contains(value) else {
      throw UsageError(
        "\(name) must be a number of MB between \(Int(range.lowerBound)) and \(Int(range.upperBound)), got '\(text)'"
      )
    }
    return Int(value * 1_000_000)
  }

  static func summaryText(_ summary: ReplaySummary, dump: String, options: ReplayOptions) -> String
  {
    let s = summary.snapshot
    var lines: [String] = []
    lines.append(
      "replayed \(SystemPath.display(dump)) in \(format(summary.elapsed.inSeconds, 2)) s (speed \(options.effectiveSpeed))"
        + (summary.stopSignal.map { ", stopped by \($0)" } ?? ""))
    for output in summary.outputs {
      if summary.outputs.count > 1 {
        lines.append("  output \(output.index) \(output.description)")
      }
      lines.append(
        contentsOf: outputLines(
          output, readError: summary.readError, indent: summary.outputs.count > 1))
    }
    var memory =
      "  memory   peak ledger \(format(Double(summary.peakLedger) / 1e6, 1)) MB of \(format(Double(s.budget) / 1e6, 1)) MB"
    if let peak = summary.peakResidentBytes {
      memory += ", peak resident \(format(Double(peak) / 1e6, 1)) MB"
    }
    lines.append(memory)
    if s.discontinuities > 0 { lines.append("  clock    \(s.discontinuities) reset(s) handled") }
    if summary.skippedRecords > 0 {
      lines.append("  skipped  \(summary.skippedRecords) dump records")
    }
    for refused in summary.refusedFormats {
      let place = refused.offset.map { " at byte \($0)" } ?? ""
      lines.append(
        "  refused  \(refused.kind) format record\(place): \(refused.reason); its samples are dropped"
      )
    }
    if summary.invalidRecords > 0 {
      lines.append("  invalid  \(summary.invalidRecords) dump records refused by the reader")
    }
    return lines.joined(separator: "\n")
  }

  /// One output's lines of the text summary: samples, bytes, drops, what was left and tiers.
  private static func outputLines(_ output: OutputSummary, readError: DumpError?, indent: Bool)
    -> [String]
  {
    let s = output.snapshot
    let pad = indent ? "  " : ""
    var lines: [String] = []
    let kinds = SampleKind.allCases.filter { s.appended[Int($0.rawValue)] > 0 }
    lines.append(
      "  \(pad)samples  "
        + kinds.map { "\($0) \(s.sent[Int($0.rawValue)])/\(s.appended[Int($0.rawValue)]) sent" }
        .joined(separator: ", "))
    lines.append("  \(pad)bytes    \(output.sentBytes) sent")
    var dropLine = "  \(pad)drops    \(s.drops.total)"
    if s.drops.total > 0 {
      var parts: [String] = []
      for kind in SampleKind.allCases {
        for reason in DropReason.allCases where s.drops[kind, reason] > 0 {
          parts.append("\(kind) \(reason) \(s.drops[kind, reason])")
        }
      }
      dropLine += " (" + parts.joined(separator: ", ") + ")"
    }
    lines.append(dropLine)
    if let cause = output.undeliveredCause(readError: readError) {
      lines.append("  \(pad)undelivered \(s.inFlight) (\(cause))")
    }
    if output.lostUnits > 0 {
      lines.append(
        "  \(pad)lost     \(output.lostUnits) units taken by the output did not reach the "
          + "destination in time (counted as undelivered, not sent)")
    }
    if let note = output.audio.note { lines.append("  \(pad)audio    \(note)") }
    if let line = output.sinkLine { lines.append("  \(pad)link     \(line)") }
    for warning in output.warnings { lines.append("  \(pad)warning  \(warning)") }
    lines.append("  \(pad)tiers    \(output.tierChanges) changes, final T\(s.tier.rawValue)")
    return lines
  }

  static func format(_ value: Double, _ decimals: Int) -> String {
    JSONObject.fixed(value, decimals: decimals)
  }
}
