import CCurl

/// The WHIP signaling exchange over libcurl: the offer POSTed, the session resource DELETEd.
/// The bearer token goes into one header handed to libcurl; nothing here prints it.
final class WHIPHTTPClient {
  /// What the endpoint answered.
  struct Response {
    var status: Int
    /// The `Location` header, as sent (maybe relative).
    var location: String?
    var body: String
  }

  private let token: String?
  /// Certificate authorities to trust instead of the system's (a PEM file), or nil.
  private let caFile: String?
  private static let globalInit: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

  init(token: String?, caFile: String? = nil) {
    self.token = token
    self.caFile = caFile
  }

  /// POSTs the SDP offer to the endpoint.
  func post(offer: String, to url: String) throws(WHIPClientError) -> Response {
    try perform(url: url, method: "POST", body: offer, contentType: "application/sdp")
  }

  /// DELETEs the session resource.
  func delete(_ url: String) throws(WHIPClientError) -> Response {
    try perform(url: url, method: "DELETE", body: nil, contentType: nil)
  }

  /// `location` resolved against `endpoint` (`/whip/a/b` on the endpoint's scheme and host).
  static func resolve(_ location: String, against endpoint: String) -> String {
    if location.contains("://") { return location }
    guard let schemeEnd = endpoint.firstRange(of: "://") else { return location }
    let afterScheme = endpoint[schemeEnd.upperBound...]
    let authorityEnd =
      afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? endpoint.endIndex
    let origin = endpoint[..<authorityEnd]
    if location.hasPrefix("/") { return origin + location }
    // Relative to the endpoint's directory.
    let path = endpoint[..<(endpoint.firstIndex(of: "?") ?? endpoint.endIndex)]
    guard let slash = path.lastIndex(of: "/"), slash >= authorityEnd else {
      return origin + "/" + location
    }
    return path[...slash] + location
  }

  private func perform(url: String, method: String, body: String?, contentType: String?)
    throws(WHIPClientError) -> Response
  {
    guard Self.globalInit == CURLE_OK, let handle = curl_easy_init() else {
      throw .transport("libcurl could not be initialised")
    }
    defer { curl_easy_cleanup(handle) }
    var headers: UnsafeMutablePointer<curl_slist>?
    defer { if let headers { curl_slist_free_all(headers) } }
    if let contentType { headers = curl_slist_append(headers, "Content-Type: \(contentType)") }
    if let token { headers = curl_slist_append(headers, "Authorization: Bearer \(token)") }
    let context = ResponseContext()
    let unmanaged = Unmanaged.passRetained(context)
    defer { unmanaged.release() }
    let pointer = unmanaged.toOpaque()
    var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    let bodyBytes = Array((body ?? "").utf8CString)
    let code = errorBuffer.withUnsafeMutableBufferPointer { buffer -> CURLcode in
      bodyBytes.withUnsafeBufferPointer { bodyPointer -> CURLcode in
        var setup = [
          ingest_curl_set_string(handle, CURLOPT_URL, url),
          ingest_curl_set_long(handle, CURLOPT_NOSIGNAL, 1),
          ingest_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"),
          ingest_curl_set_pointer(handle, CURLOPT_ERRORBUFFER, buffer.baseAddress),
          ingest_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, 5000),
          ingest_curl_set_long(handle, CURLOPT_TIMEOUT_MS, 15000),
          ingest_curl_set_string(handle, CURLOPT_CUSTOMREQUEST, method),
          ingest_curl_set_callback(handle, CURLOPT_HEADERFUNCTION, whipHeaderCallback),
          ingest_curl_set_pointer(handle, CURLOPT_HEADERDATA, pointer),
          ingest_curl_set_callback(handle, CURLOPT_WRITEFUNCTION, whipBodyCallback),
          ingest_curl_set_pointer(handle, CURLOPT_WRITEDATA, pointer),
        ]
        if let caFile { setup.append(ingest_curl_set_string(handle, CURLOPT_CAINFO, caFile)) }
        if let headers { setup.append(ingest_curl_set_list(handle, CURLOPT_HTTPHEADER, headers)) }
        if body != nil {
          // COPYPOSTFIELDS takes its own copy, up to the NUL.
          setup.append(
            ingest_curl_set_long(handle, CURLOPT_POSTFIELDSIZE, bodyBytes.count - 1))
          setup.append(
            ingest_curl_set_pointer(
              handle, CURLOPT_COPYPOSTFIELDS,
              UnsafeMutableRawPointer(mutating: bodyPointer.baseAddress)))
        }
        if let failed = setup.first(where: { $0 != CURLE_OK }) { return failed }
        return curl_easy_perform(handle)
      }
    }
    guard code == CURLE_OK else {
      let detail = String(
        decoding: errorBuffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) },
        as: UTF8.self)
      let reason = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
      // The certificate is checked again on every attempt and fails again: no retry.
      if code == CURLE_PEER_FAILED_VERIFICATION || code == CURLE_SSL_CACERT_BADFILE {
        throw .certificate(reason)
      }
      throw .transport(reason)
    }
    var status = 0
    _ = ingest_curl_get_long(handle, CURLINFO_RESPONSE_CODE, &status)
    return Response(
      status: status, location: context.location,
      body: String(decoding: context.body, as: UTF8.self))
  }
}

/// What libcurl's callbacks collect during one request. The body is bounded: an SDP answer is
/// a few kilobytes, and a server that sends more is not a WHIP endpoint.
private final class ResponseContext {
  var location: String?
  var body: [UInt8] = []
  static let maximumBody = 256 << 10
}

private let whipHeaderCallback: ingest_curl_data_callback = { data, size, count, context in
  let length = size * count
  guard let data, let context else { return length }
  let response = Unmanaged<ResponseContext>.fromOpaque(context).takeUnretainedValue()
  let line = String(
    decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
  // A new status line (after a 100 Continue or a redirect) starts a new response.
  if line.hasPrefix("HTTP/") { response.location = nil }
  if line.lowercased().hasPrefix("location:") {
    response.location = String(line.dropFirst(9)).trimmingSpaces()
  }
  return length
}

private let whipBodyCallback: ingest_curl_data_callback = { data, size, count, context in
  let length = size * count
  guard let data, let context else { return length }
  let response = Unmanaged<ResponseContext>.fromOpaque(context).takeUnretainedValue()
  guard response.body.count + length <= ResponseContext.maximumBody else { return 0 }
  response.body.append(
    contentsOf: UnsafeRawBufferPointer(start: data, count: length))
  return length
}

extension String {
  /// Without leading and trailing spaces, tabs and line ends.
  func trimmingSpaces() -> String {
    let isSpace: (Character) -> Bool = {
      $0 == " " || $0 == "\t" || $0 == "\r\n" || $0 == "\n" || $0 == "\r"
    }
    guard let first = firstIndex(where: { !isSpace($0) }),
      let last = lastIndex(where: { !isSpace($0) })
    else { return "" }
    return String(self[first...last])
  }
}
