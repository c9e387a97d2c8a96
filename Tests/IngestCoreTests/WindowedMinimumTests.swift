import Testing

@testable import IngestCore

/// The sliding-window minimum the rate controller and the SRT pacing take their baselines from.
@Suite struct WindowedMinimumTests {
  private let second: Int64 = 1_000_000_000

  @Test func emptyHasNoMinimum() {
    let window = WindowedMinimum(windowNanoseconds: 10 * second)
    #expect(window.minimum(at: 0) == nil)
  }

  @Test func theLeastValueInTheWindowCounts() {
    var window = WindowedMinimum(windowNanoseconds: 10 * second)
    window.add(50, at: 0)
    window.add(20, at: 3 * second)
    window.add(80, at: 6 * second)
    #expect(window.minimum(at: 6 * second) == 20)
  }

  /// Old values leave a bucket at a time: after one window a value is forgotten, so a path
  /// whose distance grew is followed.
  @Test func oldValuesAgeOut() {
    var window = WindowedMinimum(windowNanoseconds: 10 * second)
    window.add(20, at: 0)
    for step in 1...12 { window.add(90, at: Int64(step) * second) }
    #expect(window.minimum(at: 12 * second) == 90)
    // With no new value, the minimum is gone once the window has passed.
    #expect(window.minimum(at: 40 * second) == nil)
  }

  @Test func resetForgetsEverything() {
    var window = WindowedMinimum(windowNanoseconds: second, slots: 5)
    window.add(1, at: 0)
    window.reset()
    #expect(window.minimum(at: 0) == nil)
  }
}
