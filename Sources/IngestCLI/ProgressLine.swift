/// A one-line terminal progress display that never wraps: parts are added in order of
/// importance, and one that would take the line past `width` columns is left out, so a long
/// figure costs the least important parts instead of wrapping every redraw (or cutting a figure
/// in half).
package struct ProgressLine {
  /// One column less than a classic 80-column terminal: a line of exactly 80 characters wraps
  /// on some terminals when the cursor moves past its last column. The width when the
  /// terminal's is not known.
  package static let width = 79
  /// The narrowest line drawn, whatever the terminal says (the position and percent fit).
  package static let minimumWidth = 20

  /// The columns this line may take.
  package let width: Int

  /// The line so far, at most `width` columns (the parts are ASCII).
  package private(set) var text = ""

  /// - Parameter columns: the terminal's columns (`Console.terminalColumns`); the line takes
  ///   one less, for the reason `width` says. Nil: `width`.
  package init(columns: Int? = nil) {
    width = columns.map { max(Self.minimumWidth, $0 - 1) } ?? Self.width
  }

  /// Appends `part`, after a space, when the line stays within `width` columns; the first part
  /// is always kept (cut to `width` if it alone is longer).
  package mutating func append(_ part: String) {
    if text.isEmpty {
      text = String(part.prefix(width))
    } else if text.count + 1 + part.count <= width {
      text += " " + part
    }
  }
}
