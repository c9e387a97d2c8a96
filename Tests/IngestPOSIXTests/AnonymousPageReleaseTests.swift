import IngestPOSIX
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

@Suite struct AnonymousPageReleaseTests {
  /// The whole pages inside the range read as zeros afterwards; the partial pages at its ends,
  /// which other data may share, keep their bytes.
  @Test func wholePagesInsideTheRangeReadAsZerosAndTheEdgesKeepTheirBytes() {
    let page = Int(sysconf(Int32(_SC_PAGESIZE)))
    let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: 6 * page, alignment: page)
    defer { memory.deallocate() }
    memory.initializeMemory(as: UInt8.self, repeating: 0xAB)
    // From the middle of page 1 to the middle of page 4: pages 2 and 3 are whole inside it.
    let range = UnsafeMutableRawBufferPointer(rebasing: memory[page + 100..<4 * page + 100])
    AnonymousPageRelease().release(range)
    #expect(memory[0..<2 * page].allSatisfy { $0 == 0xAB })
    #expect(memory[2 * page..<4 * page].allSatisfy { $0 == 0 })
    #expect(memory[4 * page..<6 * page].allSatisfy { $0 == 0xAB })
    // Written again, the pages hold what is written.
    memory[2 * page] = 7
    #expect(memory[2 * page] == 7)
  }
}
