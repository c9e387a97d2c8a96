import Testing

@testable import IngestCLI

@Suite struct VersionTests {
  /// Three dot-separated whole numbers, as `--version` prints them and scripts compare them.
  @Test func theVersionIsThreeNumbers() {
    let parts = Version.number.split(separator: ".", omittingEmptySubsequences: false)
    #expect(parts.count == 3, "\(Version.number)")
    #expect(parts.allSatisfy { UInt($0) != nil }, "\(Version.number)")
  }

  @Test func theLineNamesTheProgramAndTheVersion() {
    #expect(Version.line("ingest upload") == "ingest upload \(Version.number)")
  }
}
