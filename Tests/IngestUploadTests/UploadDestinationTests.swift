import Testing

@testable import IngestUpload

@Test func namesGoUnderTheBaseURL() throws {
  let destination = try UploadDestination("https://example.com/live/rec")
  #expect(destination.base == "https://example.com/live/rec/")
  #expect(destination.isSecure)
  #expect(destination.url(for: "seg00001.ts") == "https://example.com/live/rec/seg00001.ts")
  #expect(destination.url(for: "a b%?.m3u8") == "https://example.com/live/rec/a%20b%25%3F.m3u8")
}

@Test func destinationsThatCannotWorkAreRefused() {
  for text in [
    "ftp://example.com/rec/", "http://user:secret@example.com/rec/",
    "http://example.com/rec/?sig=1",
    "http:///rec/", "http://example.com/a b/",
  ] {
    #expect(throws: UploadError.self) { try UploadDestination(text) }
  }
}

@Test func headerLinesAreCheckedWithoutQuotingThem() throws {
  let headers = try UploadHeaders(
    parsing: "# comment\r\nAuthorization: Bearer abc\r\n\nX-Token:  x y \n", source: "test")
  #expect(headers.lines == ["Authorization: Bearer abc", "X-Token:  x y "])
  do {
    _ = try UploadHeaders(parsing: "Authorization Bearer topsecret\n", source: "--header-file")
    Issue.record("accepted a line without a colon")
  } catch {
    #expect(error.description == "--header-file: line 1 is not a 'Name: value' header")
  }
}

@Test func portsOutsideTheirRangeAreUsageMistakes() throws {
  for text in [
    "http://127.0.0.1:99999/rec/", "http://127.0.0.1:0/", "http://127.0.0.1:/rec/",
    "http://127.0.0.1:80a/", "http://[::1]:70000/", "http://[::1/", "http://host:1:2/",
  ] {
    do {
      _ = try UploadDestination(text)
      Issue.record("accepted \(text)")
    } catch {
      guard case .invalidOption(let message) = error else {
        Issue.record("\(text): \(error)")
        continue
      }
      #expect(message.contains("type e.g. --to") || message.contains("IPv6"), "\(message)")
    }
  }
  #expect(try UploadDestination("http://127.0.0.1:65535/rec").base == "http://127.0.0.1:65535/rec/")
  #expect(try UploadDestination("http://[::1]:8080/").base == "http://[::1]:8080/")
  #expect(try UploadDestination("https://example.com/").base == "https://example.com/")
}
