extension EncoderOptions {
  /// The text of `ingest-encode --help`.
  public static let usage = """
    usage: ingest-encode SOURCE [options]

    Reads SOURCE in real time, encodes H.264 (libx264) or HEVC (libx265), zerolatency, and
    AAC-LC, and writes the dump stream (docs/dump-format.md) to standard output as it goes. Requests are read as JSON
    lines on standard input; what was applied, figures once a second and errors are JSON lines
    on standard error. Timestamps are CLOCK_MONOTONIC nanoseconds (timescale 1000000000).

    SOURCE
      testsrc              test pattern with a moving clock (testsrc2), a 1 kHz beep as app
                           audio and a 440 Hz beep as mic audio
      lavfi:GRAPH          a libavfilter source graph, outputs labelled out0, out1, ...
                           (video first; the first audio is app audio, the second mic audio)
      x11:DISPLAY          an X11 display through x11grab, e.g. x11::99
      PATH                 a media file, played at its own pace; its first audio stream is app
                           audio, a second one mic audio

    options
      --codec h264|hevc    video through libx264 (default) or libx265
      --size WxH           output picture size (default 1280x720)
      --fps N              frame rate of testsrc and x11grab, and the encoder's rate hint
                           (default 30)
      --bitrate BPS        video bitrate, capped by a quarter-second VBV (default 2500000)
      --gop N              frames from one keyframe to the next (default 2 s of frames; HEVC
                           keyframes after the first are CRA pictures: open GOPs)
      --bframes N          B-frames (default 0; a live stream wants none)
      --open-gop           H.264 open GOPs: later keyframes are recovery-point I pictures, not
                           IDRs, followed (with --bframes) by leading pictures
      --profile baseline|main|high
                           the H.264 profile to start in (default: libx264's, High);
                           baseline is Constrained Baseline (no B-frames, CAVLC)
      --preset NAME        x264 or x265 preset (default veryfast)
      --audio-bitrate BPS  AAC bitrate per track (default 128000)
      --mic SOURCE         mic audio from another source (sine: a 440 Hz beep, or any SOURCE)
      --no-mic             no mic track, even if SOURCE has a second audio stream
      --mix-audio app=G,mic=G
                           mix app and mic audio into one track (written as app audio; no
                           mic track) at these gains, with a limiter: what a device that
                           mixes before encoding sends. {"request":"mic"} mutes the mic in it
      --loop               play a media file again from its start at its end
      --duration SECONDS   stop after this much media time
      -h, --help           this text
      --version            the version

    requests (one JSON object a line on standard input; other members are ignored)
      {"request":"bitrate","target_bps":N}     new bitrate from the next frame, no restart
                                               (hevc: from the next keyframe, see below)
      {"request":"bitrate","restore":true}     back to --bitrate
      {"request":"frameRate","target_fps":N}   drop frames before the encoder ("fps" also read)
      {"request":"mic","enabled":false}        encoded silence on the mic track (true: mic again)
      {"request":"keyframe"}                   an IDR picture on the next frame
      {"request":"keyframesOnly","enabled":B}  every frame an IDR picture, or the GOP again
      {"request":"profile","profile":P}        H.264 in profile P (baseline, main, high) from
                                               the next keyframe: libx264 is drained and
                                               opened again there, with a new SPS (a WHIP
                                               receiver's choice; rejected for hevc)

    libx265 cannot change its bitrate in place through libavcodec 5.1: with --codec hevc a new
    bitrate (and the scaling behind frameRate) waits for the next keyframe, where the encoder is
    drained and opened again; a keyframe request brings it forward. A notice says so once.

    standard error
      {"event":"started",...}   {"event":"applied","request":...,"frame":F,"pts_ns":T,...}
      {"event":"stats",...}     {"event":"rejected","line":...,"reason":...}
      {"event":"notice","request":"bitrate","message":...}
      {"event":"end","reason":"source|duration|signal|reader",...}

    exit status: 0 at the end of the source, after --duration, on SIGINT/SIGTERM, or when the
    reader of standard output goes away; 1 when SOURCE cannot be read or encoding fails; 2 for
    a usage error.
    """
}
