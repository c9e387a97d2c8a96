import IngestCLI
import IngestCore
import IngestRuntime

extension ReplayCommand {
  /// When the progress line is shown: the `LinkFigures` it reads, fed with each output's
  /// figures as values.
  static func linkFigures(_ options: inout ReplayOptions, showProgress: Bool) -> LinkFigures? {
    guard showProgress else { return nil }
    let link = LinkFigures()
    options.outputFigures = { link.observe($0) }
    return link
  }

  /// The terminal progress line (`ProgressLine`: one column less than the terminal's, 79 when
  /// it does not say, so a redraw never wraps).
  /// Its parts in order of importance, the last ones left out when long figures fill the line:
  /// the position; with the dump's duration (`total`, 90 kHz ticks) known, the percent done and
  /// the speed factor; the bit rate; the output link's round trip and send buffer once `link`
  /// has them (SRT); drops, tier, ledger and ring; with several outputs, each other output's
  /// tier and drops (`o2 T1 d40`) before the ledger, or with more than three outputs one part
  /// for the others (`o2-5 T1 d40`: the highest tier, the drops together).
  static func progressLine(
    _ s: PipelineSnapshot, elapsed: TimeSpan, total: Int64?, link: LinkFigures? = nil,
    columns: Int? = Console.terminalColumns
  ) -> String {
    let ticks = max(0, s.newestDTS - s.firstDTS)
    let seconds = elapsed.inSeconds
    let bitrate = seconds > 0 ? Double(s.sentBytes) * 8 / seconds / 1e6 : 0
    var line = ProgressLine(columns: columns)
    line.append("\(format(MediaTicks(ticks).inSeconds, 1))s")
    if let total, total > 0 {
      line.append("\(min(100, ticks * 100 / total))%")
      let factor = seconds > 0 ? MediaTicks(ticks).inSeconds / seconds : 0
      line.append("\(format(factor, 2))x")
    }
    line.append("\(format(bitrate, 2))Mb/s")
    if let reading = link?.latest {
      let roundTrip = reading.roundTripMilliseconds
      line.append("rtt \(format(roundTrip, roundTrip < 10 ? 1 : 0))ms")
      line.append("sndbuf \(reading.sendBufferMilliseconds)ms")
    }
    line.append("drops \(s.drops.total)")
    line.append("T\(s.tier.rawValue)")
    let others = link?.otherOutputs ?? []
    if others.count > 2, let first = others.first, let last = others.last {
      // One part for them all, so that no output is left out for want of room: the highest
      // tier among them and their drops together.
      let tier = others.map(\.tier).max() ?? 0
      let dropped = others.reduce(0) { $0 + $1.dropped }
      line.append("o\(first.output)-\(last.output) T\(tier) d\(dropped)")
    } else {
      for other in others {
        line.append("o\(other.output) T\(other.tier) d\(other.dropped)")
      }
    }
    line.append("ledger \(format(Double(s.ledger) / 1e6, 1))MB")
    line.append(
      "ring \(format(MediaTicks(s.ringDuration).inSeconds, 1))s \(format(Double(s.ringBytes) / 1e6, 1))MB"
    )
    return line.text
  }
}
