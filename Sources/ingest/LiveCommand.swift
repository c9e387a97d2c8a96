import IngestCLI
import IngestCore
import IngestPOSIX
import IngestRuntime
import IngestSinks

/// `ingest live`: a live encoder child (`ingest-encode`) in the loop, steered by the pipeline.
enum LiveCommand: Command {
  static let name = "live"
  static let summary = "encode a live source with ingest-encode and stream it, steering the encoder"
  static let help = """
    usage: ingest live SOURCE --to OUTPUT [options]

    Starts the live encoder (ingest-encode, beside this program, or INGEST_ENCODE_BIN) on
    SOURCE as a child process and runs its dump stream through the same pipeline as `replay`:
    every output, --status, --json, progress, budget and ladder. What the pipeline asks the
    encoder for (bitrate, frame rate, mic, keyframes) goes to the child as it happens. The
    rate controller (queue-delay-aimd, docs/rate-control.md) steers the bitrate from the first
    network output's own figures: for SRT the bytes libsrt has not sent yet, round trip,
    acknowledged rate and first losses; for RTMP the socket's unacknowledged bytes and round
    trip; for WHIP the receiver's RTCP reports (loss, round trip). Distance, retransmissions
    and random loss are not congestion; after a cut it probes near the level that held; the
    frame rate goes down only at the floor, each step with the floor's bits per frame.

    WHIP profiles
      --to 'whip+http://HOST/PATH?profiles=high,main,baseline'
                                the H.264 profiles the offer lists, most preferred first
                                (default high,main,baseline; baseline is Constrained
                                Baseline); the encoder starts in the first. The endpoint's
                                answer chooses one (a `negotiated` status event), the
                                encoder reopens in it at the next keyframe, and video in
                                another profile is not sent. An endpoint that accepts none
                                ends the run with an error naming what it accepts. With
                                --codec hevc the offer is HEVC alone

    The child's memory is not the pipeline's: the summary reports the encoder's peak resident
    size apart (`encoder.peak_resident`), as VideoToolbox is outside an extension's budget.

    SOURCE (as ingest-encode takes it)
      testsrc                   test pattern with a moving clock and beeping app and mic audio
      lavfi:GRAPH               a libavfilter source graph
      x11:DISPLAY               an X11 display through x11grab, e.g. x11::99
      PATH                      a media file at its own pace (--loop to repeat)

    encoder options (passed to ingest-encode)
      --codec h264|hevc         libx264 (default) or libx265; with hevc a bitrate request
                                takes effect at the next keyframe (libx265 cannot change it
                                in place through libavcodec), and RTMP outputs carry it in
                                Enhanced RTMP tags (docs/rtmp.md)
      --size WxH  --fps N  --bitrate BPS (default 2500000)  --gop N  --bframes N
      --preset NAME  --audio-bitrate BPS  --mic SOURCE  --no-mic  --loop
      --duration SECONDS        stop after this much media time (default: until stopped)

    rate control
      --rate-control on|off     steer the encoder from the link (default on; SRT, RTMP and
                                WHIP outputs measure their link, files and HLS do not)
      --floor BPS               the lowest bitrate asked for at the nominal frame rate
                                (default 300000; at a lower one, its bits per frame)

    audio mix
      --encoder-mix             the encoder mixes app and mic audio (at --mix-gain) before
                                encoding and sends one audio track, as a device that mixes with
                                AVAudioMixerNode would; the mic tier mutes the mic in it.
                                Without it, an output that mixes (--audio mix, RTMP's default)
                                gets a mix made here from the encoder's two tracks

    output and run options: as for `ingest replay` (--to, --buffer, --budget, --overhead,
    --status, --segment, --hls-window, --audio, --mix-gain, --min-delivered, -y/--force to
    overwrite an existing .ts, .mp4 or .mov file, --json, --quiet); there is no --speed: a live source runs at its own pace. --min-delivered counts
    the frames the encoder skipped for a lower frame rate as not delivered.

    Ctrl-C (SIGINT), SIGTERM, SIGHUP (a closed terminal) or SIGUSR1 stops the encoder and
    finishes every output; SIGQUIT stops at once, without draining, and exits 1. If the encoder dies
    on its own, the run says so and exits 1, with the outputs finished.

    exit status: 0 ok, 1 runtime error (encoder failed, output failed, too little delivered),
    2 usage error
    """

  /// ingest-encode's options that take a value, passed through as given.
  private static let encoderValued: Set<String> = [
    "--codec", "--size", "--fps", "--bitrate", "--gop", "--bframes", "--preset", "--audio-bitrate",
    "--mic", "--duration",
  ]
  private static let encoderFlags: Set<String> = ["--no-mic", "--loop"]

  static func run(_ argv: [String]) throws -> Int32 {
    let args = try Arguments(
      argv,
      valued: ReplayCommand.runOptions.union(encoderValued).union(["--rate-control", "--floor"]),
      flags: encoderFlags.union(ReplayCommand.runFlags).union([
        "--json", "--quiet", "--encoder-mix",
      ]),
      expecting: ReplayCommand.runOptionValues)
    guard args.positionals.count == 1 else { throw UsageError("expected one SOURCE") }
    let source = args.positionals[0]
    try EncoderArgumentCheck.check(args, source: source)
    var (options, status) = try ReplayCommand.parseRunOptions(args, input: source)
    var encoderArguments: [String] = []
    for name in encoderValued.sorted() {
      if let value = args[name] { encoderArguments += [name, value] }
    }
    for name in encoderFlags.sorted() where args.has(name) { encoderArguments.append(name) }
    let encoderMix = args.has("--encoder-mix")
    if encoderMix {
      guard options.audio == nil || options.audio == .mix else {
        throw UsageError(
          "--encoder-mix sends one mixed track: it cannot go with --audio \(args["--audio"] ?? "")")
      }
      encoderArguments += ["--mix-audio", options.mixGains.description]
      options.mixedByEncoder = options.mixGains
    }
    // The ladder halves the encoder's frame rate under pressure and restores this one.
    if let fps = try positive(args, "--fps") { options.nominalFrameRate = fps }
    let bitrate = try positive(args, "--bitrate") ?? 2_500_000
    let floor = try positive(args, "--floor") ?? 300_000
    guard floor <= bitrate else {
      throw UsageError("--floor (\(floor)) must not be above --bitrate (\(bitrate))")
    }
    switch args["--rate-control"] ?? "on" {
    case "on":
      // Audio rides on the same link: the encoder's AAC tracks, or the one asked for.
      let oneTrack = options.audio.map { $0 != .both } ?? false
      let audioTracks = args.has("--no-mic") || encoderMix || oneTrack ? 1 : 2
      options.rateControl = LiveRateConfiguration.make(
        nominalBitsPerSecond: bitrate, floorBitsPerSecond: floor,
        nominalFrameRate: options.nominalFrameRate,
        audioBitsPerSecond: try positive(args, "--audio-bitrate") ?? 128_000,
        audioTracks: audioTracks, output: options.targets.first(where: \.isNetwork))
    case "off": break
    case let other: throw UsageError("--rate-control must be on or off, got '\(other)'")
    }
    let showProgress = !args.has("--quiet") && Console.stderrIsTerminal
    let link = ReplayCommand.linkFigures(&options, showProgress: showProgress)
    StopSignal.install()
    let summary: ReplaySummary
    do {
      summary = try LiveSession.run(
        source: source, encoderArguments: encoderArguments, options: options,
        clock: SystemClock()
      ) { snapshot, elapsed in
        if showProgress {
          Console.progress(
            ReplayCommand.progressLine(snapshot, elapsed: elapsed, total: nil, link: link))
        }
      }
    } catch {
      if case .usage(let message) = error { throw UsageError(message) }
      Console.error("ingest live: \(error)")
      return 1
    }
    if showProgress { Console.progress("") }
    return ReplayCommand.report(
      summary, command: "live", input: source, options: options, status: status,
      json: args.has("--json"))
  }

  private static func positive(_ args: Arguments, _ name: String) throws(UsageError) -> Int? {
    guard let text = args[name] else { return nil }
    guard let value = Int(text), value > 0 else {
      throw UsageError("\(name) must be a positive whole number, got '\(text)'")
    }
    return value
  }
}
