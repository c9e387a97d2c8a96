/// GStreamer as a second decoder: `tsdemux ! h26Xparse ! avdec_h26X ! fakesink` under
/// `GST_DEBUG=2`, counting what reached the sink and every warning or error logged.
package enum GStreamerDecode {
  package struct Result {
    /// Decoded pictures that reached the sink.
    package var frames: Int
    /// WARN and ERROR lines of the debug log, and the exit status when it was not 0.
    package var problems: [String]
  }

  /// Decodes the video of a .ts file, or of an HLS playlist when `playlist` is set.
  /// - Parameter codec: "h264" or "hevc".
  package static func decode(_ path: String, codec: String, playlist: Bool = false) throws
    -> Result
  {
    let (parser, decoder) =
      codec == "hevc" ? ("h265parse", "avdec_h265") : ("h264parse", "avdec_h264")
    // A .ts file is read through a queue, in push mode as a live input is: in pull mode
    // GStreamer 1.22's filesrc warns "pad not activated yet" for every transport stream file,
    // ffmpeg's own included.
    let source =
      playlist
      ? ["filesrc", "location=\(path)", "!", "hlsdemux", "!", "tsdemux"]
      : ["filesrc", "location=\(path)", "!", "queue", "!", "tsdemux"]
    let result = try CommandRunner.run(
      "env",
      ["GST_DEBUG=2", "GST_DEBUG_NO_COLOR=1", "gst-launch-1.0", "-v"] + source + [
        "!", parser, "!", decoder, "!", "fakesink", "silent=false",
      ])
    // fakesink's last-message notifications (-v) name each buffer it was handed.
    let frames = result.stdout.split(separator: "\n").filter { $0.contains("chain   ") }.count
    var problems = result.stderr.split(separator: "\n").map(String.init).filter {
      $0.contains(" WARN ") || $0.contains(" ERROR ")
    }
    if result.status != 0 || result.timedOut { problems.append("exit \(result.status)") }
    return Result(frames: frames, problems: problems)
  }
}
