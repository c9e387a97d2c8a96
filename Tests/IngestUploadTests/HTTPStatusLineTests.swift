import Testing

@testable import IngestUpload

@Test func statusLineEndsBeforeItsCRLF() {
  #expect(
    HTTPStatusLine.text(ofHeaderLine: Array("HTTP/1.1 403 Forbidden\r\n".utf8)) == "403 Forbidden")
  #expect(HTTPStatusLine.text(ofHeaderLine: Array("HTTP/2 503\r\n".utf8)) == "503")
  #expect(
    HTTPStatusLine.text(ofHeaderLine: Array("HTTP/1.0 404 Not Found\n".utf8)) == "404 Not Found")
}

@Test func controlBytesInAReasonPhraseBecomeSpaces() {
  let line = Array("HTTP/1.1 500 Bad\u{1B}[2J\tThing \r\n".utf8)
  let text = HTTPStatusLine.text(ofHeaderLine: line)
  #expect(text == "500 Bad [2J Thing")
  #expect(text.map { $0.utf8.allSatisfy { $0 >= 0x20 && $0 != 0x7F } } == true)
}

@Test func otherHeaderLinesAreNotStatusLines() {
  #expect(HTTPStatusLine.text(ofHeaderLine: Array("Content-Length: 3\r\n".utf8)) == nil)
  #expect(HTTPStatusLine.text(ofHeaderLine: Array("\r\n".utf8)) == nil)
}

@Test func aLongReasonIsCut() {
  let line = Array(("HTTP/1.1 400 " + String(repeating: "x", count: 500) + "\r\n").utf8)
  #expect(HTTPStatusLine.text(ofHeaderLine: line)?.utf8.count == HTTPStatusLine.maximumLength)
}

@Test func refusalMessagesAreOneLine() {
  let error = UploadError.refused(name: "seg00000.ts", status: 403, statusLine: "403 Forbidden")
  #expect(error.description == "the server refused seg00000.ts with 403 Forbidden; not retried")
}
