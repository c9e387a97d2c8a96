import IngestCore
/// Draws a scenario's trace as a standalone SVG file (no dependency): ledger and resident memory
/// against the budget in the upper panel, ring fill and degradation tier in the lower one.
///
/// ```
/// +--------------------------------------------------+
/// | title                                            |
/// | MB  ledger ----, resident ----, budget - - -     |  memory panel
/// |                                                  |
/// | %   ring fill ----                       tier T4 |  ring panel (tier on the right axis)
/// |                                              T0  |
/// |     0 s ........................... end s        |
/// +--------------------------------------------------+
/// ```
public struct SVGChart {
  public var title: String
  public var subtitle: String
  public var points: [BenchTrace.Point]
  /// The memory ceiling drawn as a dashed line, bytes.
  public var budget: Int

  static let width = 960.0
  static let left = 70.0
  static let right = 60.0
  static let plotWidth = width - left - right
  static let memoryTop = 70.0
  static let memoryHeight = 240.0
  static let ringTop = 360.0
  static let ringHeight = 150.0
  static let height = 600.0

  static let ledgerColor = "#1f77b4"
  static let residentColor = "#ff7f0e"
  static let budgetColor = "#d62728"
  static let ringColor = "#2ca02c"
  static let tierColor = "#9467bd"

  public init(title: String, subtitle: String, points: [BenchTrace.Point], budget: Int) {
    self.title = title
    self.subtitle = subtitle
    self.points = points
    self.budget = budget
  }

  /// A round step giving about `count` ticks over `range`.
  static func tickStep(_ range: Double, count: Double) -> Double {
    guard range > 0 else { return 1 }
    let raw = range / count
    var magnitude = 1.0
    while magnitude * 10 <= raw { magnitude *= 10 }
    while magnitude > raw { magnitude /= 10 }
    for factor in [1.0, 2.0, 5.0, 10.0] where magnitude * factor >= raw {
      return magnitude * factor
    }
    return magnitude * 10
  }

  static func number(_ value: Double) -> String {
    let rounded = (value * 10).rounded() / 10
    return rounded == rounded.rounded()
      ? String(Int(rounded)) : JSONObject.fixed(rounded, decimals: 1)
  }

  static func escaped(_ text: String) -> String {
    var out = ""
    for character in text {
      switch character {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "\"": out += "&quot;"
      default: out.append(character)
      }
    }
    return out
  }

  /// The SVG document.
  public var rendered: String {
    let endTime = max(points.last?.time ?? 1, 0.001)
    let megabytes = { (bytes: Int) in Double(bytes) / 1e6 }
    let memoryMax =
      max(
        megabytes(budget),
        points.map { max(megabytes($0.ledger), megabytes($0.resident)) }.max() ?? 0)
      * 1.1
    func x(_ time: Double) -> Double { Self.left + time / endTime * Self.plotWidth }
    func memoryY(_ value: Double) -> Double {
      Self.memoryTop + Self.memoryHeight - value / memoryMax * Self.memoryHeight
    }
    func ringY(_ fraction: Double) -> Double {
      Self.ringTop + Self.ringHeight - min(max(fraction, 0), 1.2) / 1.2 * Self.ringHeight
    }
    func tierY(_ tier: Int) -> Double {
      Self.ringTop + Self.ringHeight - Double(tier) / 4.8 * Self.ringHeight
    }
    func path(
      _ coordinates: [(Double, Double)], color: String, step: Bool = false, dash: String? = nil
    )
      -> String
    {
      var d = ""
      var previousY: Double?
      for (index, (px, py)) in coordinates.enumerated() {
        if index == 0 {
          d += "M\(Self.number(px)) \(Self.number(py))"
        } else {
          if step, let previousY { d += " L\(Self.number(px)) \(Self.number(previousY))" }
          d += " L\(Self.number(px)) \(Self.number(py))"
        }
        previousY = py
      }
      let dashing = dash.map { " stroke-dasharray=\"\($0)\"" } ?? ""
      return
        "<path d=\"\(d)\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"1.6\"\(dashing)/>\n"
    }

    var svg = """
      <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(Self.width))" height="\(Int(Self.height))" \
      viewBox="0 0 \(Int(Self.width)) \(Int(Self.height))" font-family="sans-serif" font-size="12">
      <rect width="100%" height="100%" fill="white"/>
      <text x="\(Int(Self.left))" y="26" font-size="17" font-weight="bold">\(Self.escaped(title))</text>
      <text x="\(Int(Self.left))" y="46" fill="#555">\(Self.escaped(subtitle))</text>

      """
    // Grids and axes.
    let timeStep = Self.tickStep(endTime, count: 10)
    var tick = 0.0
    while tick <= endTime + timeStep * 1e-6 {
      let px = Self.number(x(tick))
      for (top, height) in [(Self.memoryTop, Self.memoryHeight), (Self.ringTop, Self.ringHeight)] {
        svg +=
          "<line x1=\"\(px)\" y1=\"\(Self.number(top))\" x2=\"\(px)\" y2=\"\(Self.number(top + height))\" stroke=\"#eee\"/>\n"
      }
      svg +=
        "<text x=\"\(px)\" y=\"\(Self.number(Self.ringTop + Self.ringHeight + 18))\" text-anchor=\"middle\">\(Self.number(tick))</text>\n"
      tick += timeStep
    }
    svg +=
      "<text x=\"\(Self.number(Self.left + Self.plotWidth / 2))\" y=\"\(Self.number(Self.ringTop + Self.ringHeight + 38))\" text-anchor=\"middle\">time (s)</text>\n"
    let memoryStep = Self.tickStep(memoryMax, count: 6)
    var level = 0.0
    while level <= memoryMax {
      let py = Self.number(memoryY(level))
      svg +=
        "<line x1=\"\(Int(Self.left))\" y1=\"\(py)\" x2=\"\(Int(Self.left + Self.plotWidth))\" y2=\"\(py)\" stroke=\"#eee\"/>\n"
      svg +=
        "<text x=\"\(Int(Self.left - 6))\" y=\"\(py)\" text-anchor=\"end\" dy=\"4\">\(Self.number(level))</text>\n"
      level += memoryStep
    }
    svg +=
      "<text transform=\"translate(22 \(Self.number(Self.memoryTop + Self.memoryHeight / 2))) rotate(-90)\" text-anchor=\"middle\">memory (MB)</text>\n"
    for percent in stride(from: 0, through: 100, by: 25) {
      let py = Self.number(ringY(Double(percent) / 100))
      svg +=
        "<line x1=\"\(Int(Self.left))\" y1=\"\(py)\" x2=\"\(Int(Self.left + Self.plotWidth))\" y2=\"\(py)\" stroke=\"#eee\"/>\n"
      svg +=
        "<text x=\"\(Int(Self.left - 6))\" y=\"\(py)\" text-anchor=\"end\" dy=\"4\">\(percent)</text>\n"
    }
    for tier in 0...4 {
      svg +=
        "<text x=\"\(Int(Self.left + Self.plotWidth + 8))\" y=\"\(Self.number(tierY(tier)))\" dy=\"4\" fill=\"\(Self.tierColor)\">T\(tier)</text>\n"
    }
    svg +=
      "<text transform=\"translate(22 \(Self.number(Self.ringTop + Self.ringHeight / 2))) rotate(-90)\" text-anchor=\"middle\">ring fill (%)</text>\n"
    for (top, height) in [(Self.memoryTop, Self.memoryHeight), (Self.ringTop, Self.ringHeight)] {
      svg +=
        "<rect x=\"\(Int(Self.left))\" y=\"\(Self.number(top))\" width=\"\(Self.number(Self.plotWidth))\" height=\"\(Self.number(height))\" fill=\"none\" stroke=\"#333\"/>\n"
    }
    // Series.
    let budgetY = memoryY(megabytes(budget))
    svg += path([(x(0), budgetY), (x(endTime), budgetY)], color: Self.budgetColor, dash: "6 4")
    svg += path(
      points.map { (x($0.time), memoryY(megabytes($0.resident))) }, color: Self.residentColor)
    svg += path(points.map { (x($0.time), memoryY(megabytes($0.ledger))) }, color: Self.ledgerColor)
    svg += path(points.map { (x($0.time), ringY($0.ringFill)) }, color: Self.ringColor)
    svg += path(points.map { (x($0.time), tierY($0.tier)) }, color: Self.tierColor, step: true)
    // Legends.
    let legends: [(String, String, Double)] = [
      ("ledger", Self.ledgerColor, Self.memoryTop - 8),
      ("resident memory (kernel)", Self.residentColor, Self.memoryTop - 8),
      (
        "budget \(Self.number(megabytes(budget))) MB (also the RSS ceiling)", Self.budgetColor,
        Self.memoryTop - 8
      ),
      ("ring fill (buffered duration / limit)", Self.ringColor, Self.ringTop - 8),
      ("degradation tier", Self.tierColor, Self.ringTop - 8),
    ]
    var legendX = [Self.memoryTop - 8: Self.left, Self.ringTop - 8: Self.left]
    for (name, color, y) in legends {
      let start = legendX[y] ?? Self.left
      svg +=
        "<line x1=\"\(Self.number(start))\" y1=\"\(Self.number(y - 4))\" x2=\"\(Self.number(start + 18))\" y2=\"\(Self.number(y - 4))\" stroke=\"\(color)\" stroke-width=\"2.5\"/>\n"
      svg +=
        "<text x=\"\(Self.number(start + 23))\" y=\"\(Self.number(y))\">\(Self.escaped(name))</text>\n"
      legendX[y] = start + 40 + Double(name.count) * 6.3
    }
    svg += "</svg>\n"
    return svg
  }
}
