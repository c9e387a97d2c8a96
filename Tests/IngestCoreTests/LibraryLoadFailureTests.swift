import IngestCore
import Testing

/// "Install it" only when the library is missing: an installed one that cannot be mapped (no
/// address space under `ulimit -v`) is named with the reason.
@Suite struct LibraryLoadFailureTests {
  @Test func missingLibraryAsksToInstallIt() {
    let message = LibraryLoadFailure.message(
      soname: "libavcodec.so.59",
      reason: "libavcodec.so.59: cannot open shared object file: No such file or directory",
      install: "install libavcodec59 (apt-get install ffmpeg)")
    #expect(
      message == "cannot load libavcodec.so.59: install libavcodec59 (apt-get install ffmpeg)")
  }

  @Test func installedLibraryThatCannotBeMappedSaysWhy() {
    let message = LibraryLoadFailure.message(
      soname: "libavcodec.so.59",
      reason: "libicudata.so.72: failed to map segment from shared object",
      install: "install libavcodec59 (apt-get install ffmpeg)")
    #expect(!message.contains("install"))
    #expect(message.contains("failed to map segment"))
    #expect(message.contains("ulimit -v"))
  }
}
