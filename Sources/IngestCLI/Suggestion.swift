/// The known word a mistyped one was most likely meant to be, for "did you mean" hints.
package enum Suggestion {
  /// The candidate nearest to `word` by edit distance (insertions, deletions, substitutions),
  /// when it is at most 2 edits away and the word is not that short; the first of equals.
  package static func closest(to word: String, among candidates: some Sequence<String>)
    -> String?
  {
    let typed = Array(word.unicodeScalars)
    guard typed.count >= 3 else { return nil }
    var best: (candidate: String, distance: Int)?
    for candidate in candidates.sorted() {
      let distance = editDistance(typed, Array(candidate.unicodeScalars))
      if distance <= 2, distance < (best?.distance ?? .max) { best = (candidate, distance) }
    }
    return best?.candidate
  }

  /// Levenshtein distance, one row at a time.
  static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
    var previous = Array(0...b.count)
    for (i, x) in a.enumerated() {
      var current = [i + 1] + [Int](repeating: 0, count: b.count)
      for (j, y) in b.enumerated() {
        current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
      }
      previous = current
    }
    return previous[b.count]
  }
}
