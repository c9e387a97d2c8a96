import IngestCore
import Testing

@testable import IngestUpload

@Test func statusesSayWhetherToRetry() {
  #expect(RetryPolicy.verdict(status: 201) == .success)
  #expect(RetryPolicy.verdict(status: 204) == .success)
  for status in [500, 502, 503, 504, 408, 429] {
    #expect(RetryPolicy.verdict(status: status) == .retry)
  }
  for status in [301, 400, 401, 403, 404, 413] {
    #expect(RetryPolicy.verdict(status: status) == .refuse)
  }
}

@Test func backoffDoublesUpToTheCapWithBoundedJitter() {
  var backoff = RetryPolicy(initialDelay: 0.5, maximumDelay: 4).backoff(seed: 7)
  let nominal: [TimeSpan] = [500, 1000, 2000, 4000, 4000, 4000].map { .milliseconds($0) }
  for expected in nominal {
    let delay = backoff.next()
    #expect(delay >= expected * 8 / 10 && delay <= expected * 12 / 10)
  }
}

@Test func theCapIsNeverBelowTheFirstDelay() {
  #expect(RetryPolicy(initialDelay: 2, maximumDelay: 1).maximumDelay == 2)
}
