import Testing

@testable import IngestCLI

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The words a process was started with, read from argc and argv as the runtime hands them over.
@Suite struct CommandLineWordsTests {
  /// Runs `body` with a C argv holding `words` (the program's name first) and a null after them.
  private func withArgv<Result>(
    _ words: [String], _ body: (UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Result
  ) -> Result {
    let pointers = words.map { strdup($0) } + [nil]
    defer { for pointer in pointers { free(pointer) } }
    var argv = pointers
    return argv.withUnsafeMutableBufferPointer { body($0.baseAddress!) }
  }

  /// A process whose argc is 0 (an empty argv, or libfaketime preloaded) has no words, and
  /// reading them does not trap on the range 1..<0.
  @Test func anEmptyArgvHasNoWords() {
    #expect(withArgv([]) { Arguments.afterProgramName(argc: 0, argv: $0) } == [])
  }

  @Test func theProgramNameAloneHasNoWords() {
    #expect(withArgv(["ingest"]) { Arguments.afterProgramName(argc: 1, argv: $0) } == [])
  }

  @Test func theWordsAfterTheProgramNameAreRead() {
    let words = withArgv(["ingest", "replay", "-"]) {
      Arguments.afterProgramName(argc: 3, argv: $0)
    }
    #expect(words == ["replay", "-"])
  }

  /// The kernel's copy (`/proc/self/cmdline`), read when argc is 0: NUL-terminated words, the
  /// program's name first; an empty word stays a word.
  @Test func theKernelsCopyIsSplitAtEachNul() {
    let bytes = Array("ingest\0replay\0\0--to\0-\0".utf8)
    #expect(Arguments.afterProgramName(nulSeparated: bytes) == ["replay", "", "--to", "-"])
    #expect(Arguments.afterProgramName(nulSeparated: Array("ingest\0".utf8)) == [])
    #expect(Arguments.afterProgramName(nulSeparated: []) == [])
  }
}
