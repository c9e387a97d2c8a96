import Testing

@testable import IngestCore

/// The sliding-window minimum the rate controller and the SRT pacing take their baselines from.
@Suite struct WindowedMinimumTests {
  private let second = TimeSpan.seconds(1)

  @Test func emptyHasNoMinimum() {
    let window = WindowedMinimum(window: 10 * second)
    #expect(window.minimum(at: .origin) == nil)
  }

  @Test func theLeastValueInTheWindowCounts() {
    var window = WindowedMinimum(window: 10 * second)
    window.add(50, at: .origin)
    window.add(20, at: .at(3 * second))
    window.add(80, at: .at(6 * second))
    #expect(window.minimum(at: .at(6 * second)) == 20)
  }

  /// Old values leave a bucket at a time: after one window a value is forgotten, so a path
  /// whose distance grew is followed.
  @Test func oldValuesAgeOut() {
    var window = WindowedMinimum(window: 10 * second)
    window.add(20, at: .origin)
    for step in 1...12 { window.add(90, at: .at(Int64(step) * second)) }
    #expect(window.minimum(at: .at(12 * second)) == 90)
    // With no new value, the minimum is gone once the window has passed.
    #expect(window.minimum(at: .at(40 * second)) == nil)
  }

  @Test func resetForgetsEverything() {
    var window = WindowedMinimum(window: second, slots: 5)
    window.add(1, at: .origin)
    window.reset()
    #expect(window.minimum(at: .origin) == nil)
  }
}
