import Testing

@testable import IngestCLI

@Suite struct ProgressLineTests {
  @Test func partsThatFitAreAllShownInOrder() {
    var line = ProgressLine()
    for part in ["9.5s", "94%", "1.00x", "1.01Mb/s", "rtt 0.1ms", "sndbuf 0ms", "drops 0", "T0"] {
      line.append(part)
    }
    #expect(line.text == "9.5s 94% 1.00x 1.01Mb/s rtt 0.1ms sndbuf 0ms drops 0 T0")
  }

  /// Long figures (hours of content, a huge factor, millions of drops, a slow link) leave out
  /// the least important parts; the line never passes 79 columns and keeps the first parts.
  @Test func longFiguresNeverPassSeventyNineColumns() {
    var line = ProgressLine()
    let parts = [
      "102481911520608.6s", "100%", "99999999999999.99x", "123456789.12Mb/s", "rtt 123457ms",
      "sndbuf 99999999ms", "drops 9223372036854775807", "T4", "ledger 4096.0MB",
      "ring 5.0s 4096.0MB",
    ]
    for part in parts { line.append(part) }
    #expect(line.text.count <= ProgressLine.width)
    #expect(ProgressLine.width == 79)
    #expect(line.text.hasPrefix("102481911520608.6s 100% 99999999999999.99x 123456789.12Mb/s"))
    #expect(line.text.contains("rtt 123457ms"))
    // What was left out went whole: every part shown is one of the parts.
    #expect(
      line.text.split(separator: " ").count
        < parts.joined(separator: " ").split(separator: " ").count)
  }

  @Test func everyLengthOfPartsStaysWithinTheWidth() {
    for length in 0...120 {
      var line = ProgressLine()
      for _ in 0..<6 { line.append(String(repeating: "8", count: length)) }
      #expect(line.text.count <= 79, "parts of \(length)")
      #expect(line.text.count == min(length, 79) || length <= 39, "parts of \(length)")
    }
  }

  @Test func aShorterLaterPartStillFits() {
    var line = ProgressLine()
    line.append(String(repeating: "a", count: 70))
    line.append("ledger 25.1MB")
    line.append("T0")
    #expect(line.text == String(repeating: "a", count: 70) + " T0")
  }

  /// A 60-column terminal gets a 59-column line (a line as wide as the terminal scrolls a new
  /// row per redraw); a terminal too narrow still shows the first parts; none said: 79.
  @Test func theLineFollowsTheTerminalsWidth() {
    for (columns, width) in [(60, 59), (200, 199), (5, ProgressLine.minimumWidth), (nil, 79)] {
      var line = ProgressLine(columns: columns)
      for _ in 0..<40 { line.append("drops 123") }
      #expect(line.width == width)
      #expect(
        line.text.count <= width && line.text.count > width - 10, "\(String(describing: columns))")
    }
  }
}
