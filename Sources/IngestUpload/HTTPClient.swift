import CCurl
import IngestPOSIX

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// One libcurl easy handle making PUT and HEAD requests, one at a time.
///
/// The handle is reused so that its connection (and TLS session) survives between files; every
/// request starts from `curl_easy_reset`, which keeps those caches. Headers are handed to libcurl
/// only; nothing here prints them (verbose mode is never on).
public final class HTTPClient {
  /// How requests are made.
  public struct Configuration: Sendable {
    /// Extra header lines, e.g. `Authorization: Bearer …`.
    public var headers: [String] = []
    /// A PEM file of CA certificates to trust instead of the system store.
    public var caFile: String?
    /// Seconds allowed for the TCP and TLS connection.
    public var connectTimeout: Double = 10
    /// Seconds without a byte moving (either way) before a request is abandoned as stalled.
    public var stallTimeout: Double = 20
    /// Upper bound of the sending rate in bytes per second (nil: as fast as the link allows).
    public var maximumSendRate: Int64?

    public init() {}
  }

  /// What the server answered.
  public struct Response: Equatable, Sendable {
    /// The HTTP status code.
    public var status: Int
    /// The status line without its version (`403 Forbidden`), for messages.
    public var statusLine: String
    /// `Content-Length` of the response (HEAD: the size of the stored file), if sent.
    public var contentLength: Int64?
  }

  private let handle: UnsafeMutableRawPointer
  private let configuration: Configuration
  private let stopRequested: () -> String?
  private var headerList: UnsafeMutablePointer<curl_slist>?

  private static let globalInit: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

  /// Creates the handle.
  /// - Parameter stopRequested: asked during every request (libcurl's progress callback, about
  ///   once a second even while nothing moves): a name (`SIGINT`) ends the request at once with
  ///   `UploadError.stopped`.
  public init(_ configuration: Configuration, stopRequested: @escaping () -> String? = { nil })
    throws(UploadError)
  {
    guard Self.globalInit == CURLE_OK, let handle = curl_easy_init() else {
      throw .fatalTransport("libcurl could not be initialised")
    }
    self.handle = handle
    self.configuration = configuration
    self.stopRequested = stopRequested
    for line in configuration.headers {
      guard let list = curl_slist_append(headerList, line) else {
        throw .fatalTransport("libcurl could not store a header")
      }
      headerList = list
    }
  }

  deinit {
    curl_easy_cleanup(handle)
    if let headerList { curl_slist_free_all(headerList) }
  }

  /// PUTs `bytes` bytes of the file at `path`.
  /// - Parameter bodySent: called once, inside the request, when libcurl has handed the whole
  ///   body to the connection (the server's answer still to come).
  public func put(
    file path: String, bytes: Int64, to url: String, bodySent: (() -> Void)? = nil
  ) throws(UploadError) -> Response {
    let fd = try UploadFiles.openForReading(path)
    defer { fd.close() }
    let context = TransferContext(body: .file(fd, remaining: bytes), stopRequested: stopRequested)
    context.bodySent = bodySent
    let response = try perform(url: url, context: context) { handle in
      [
        ingest_curl_set_long(handle, CURLOPT_UPLOAD, 1),
        ingest_curl_set_offset(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(bytes)),
      ]
    }
    if let failure = context.readFailure {
      throw .file(FileError(operation: "read", path: path, errno: failure))
    }
    return response
  }

  /// PUTs bytes held in memory (the playlist, read once so that the copy sent is consistent).
  public func put(_ data: [UInt8], to url: String) throws(UploadError) -> Response {
    let context = TransferContext(body: .memory(data, offset: 0), stopRequested: stopRequested)
    return try perform(url: url, context: context) { handle in
      [
        ingest_curl_set_long(handle, CURLOPT_UPLOAD, 1),
        ingest_curl_set_offset(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(data.count)),
      ]
    }
  }

  /// HEAD: whether the server has the file, and its size.
  public func head(_ url: String) throws(UploadError) -> Response {
    try perform(url: url, context: TransferContext(body: .none, stopRequested: stopRequested)) {
      handle in
      [ingest_curl_set_long(handle, CURLOPT_NOBODY, 1)]
    }
  }

  private func perform(
    url: String, context: TransferContext, method: (UnsafeMutableRawPointer) -> [CURLcode]
  ) throws(UploadError) -> Response {
    curl_easy_reset(handle)
    var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    let unmanaged = Unmanaged.passRetained(context)
    defer { unmanaged.release() }
    let pointer = unmanaged.toOpaque()
    let code = errorBuffer.withUnsafeMutableBufferPointer { buffer -> CURLcode in
      var setup =
        [
          ingest_curl_set_string(handle, CURLOPT_URL, url),
          ingest_curl_set_long(handle, CURLOPT_NOSIGNAL, 1),
          ingest_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"),
          ingest_curl_set_pointer(handle, CURLOPT_ERRORBUFFER, buffer.baseAddress),
          ingest_curl_set_long(
            handle, CURLOPT_CONNECTTIMEOUT_MS, Int(configuration.connectTimeout * 1000)),
          ingest_curl_set_long(handle, CURLOPT_LOW_SPEED_LIMIT, 1),
          ingest_curl_set_long(
            handle, CURLOPT_LOW_SPEED_TIME, max(1, Int(configuration.stallTimeout.rounded(.up)))),
          ingest_curl_set_callback(handle, CURLOPT_READFUNCTION, readCallback),
          ingest_curl_set_pointer(handle, CURLOPT_READDATA, pointer),
          ingest_curl_set_callback(handle, CURLOPT_HEADERFUNCTION, headerCallback),
          ingest_curl_set_pointer(handle, CURLOPT_HEADERDATA, pointer),
          ingest_curl_set_callback(handle, CURLOPT_WRITEFUNCTION, discardCallback),
          ingest_curl_set_long(handle, CURLOPT_NOPROGRESS, 0),
          // The shim has no setter for this callback's type; curl_easy_setopt reads a function
          // pointer from its variadic argument, which on every POSIX ABI is passed as a pointer.
          ingest_curl_set_pointer(
            handle, CURLOPT_XFERINFOFUNCTION,
            unsafeBitCast(progressCallback, to: UnsafeMutableRawPointer.self)),
          ingest_curl_set_pointer(handle, CURLOPT_XFERINFODATA, pointer),
        ] + method(handle)
      if let headerList {
        setup.append(ingest_curl_set_list(handle, CURLOPT_HTTPHEADER, headerList))
      }
      if let caFile = configuration.caFile {
        setup.append(ingest_curl_set_string(handle, CURLOPT_CAINFO, caFile))
      }
      if let rate = configuration.maximumSendRate {
        setup.append(ingest_curl_set_offset(handle, CURLOPT_MAX_SEND_SPEED_LARGE, curl_off_t(rate)))
      }
      if let failed = setup.first(where: { $0 != CURLE_OK }) { return failed }
      return curl_easy_perform(handle)
    }
    if let signal = context.stoppedBy { throw .stopped(signal: signal) }
    guard code == CURLE_OK else {
      let detail = String(
        decoding: errorBuffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) },
        as: UTF8.self)
      let message = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
      if Self.fatalCodes.contains(code.rawValue) || context.readFailure != nil {
        throw .fatalTransport(message)
      }
      throw .transport(message)
    }
    var status = 0
    _ = ingest_curl_get_long(handle, CURLINFO_RESPONSE_CODE, &status)
    var length: curl_off_t = -1
    _ = ingest_curl_get_offset(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length)
    return Response(
      status: status, statusLine: context.statusLine,
      contentLength: length >= 0 ? Int64(length) : nil)
  }

  /// libcurl results that another attempt cannot change: certificate problems, bad options.
  private static let fatalCodes: Set<UInt32> = [
    CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT, CURLE_NOT_BUILT_IN, CURLE_OUT_OF_MEMORY,
    CURLE_BAD_FUNCTION_ARGUMENT, CURLE_UNKNOWN_OPTION, CURLE_SSL_ENGINE_NOTFOUND,
    CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_PEER_FAILED_VERIFICATION,
    CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
  ].map(\.rawValue).reduce(into: []) { $0.insert($1) }
}

/// The state libcurl's callbacks see during one request.
private final class TransferContext {
  enum Body {
    case none
    case file(FileDescriptor, remaining: Int64)
    case memory([UInt8], offset: Int)
  }

  var body: Body
  var statusLine = ""
  var readFailure: Int32?
  let stopRequested: () -> String?
  /// The stop that ended the request, when one did.
  var stoppedBy: String?
  /// Called once when the whole body was uploaded; nil after.
  var bodySent: (() -> Void)?

  init(body: Body, stopRequested: @escaping () -> String?) {
    self.body = body
    self.stopRequested = stopRequested
  }
}

private let readCallback: ingest_curl_data_callback = { buffer, size, count, user in
  guard let buffer, let user else { return 0 }
  let context = Unmanaged<TransferContext>.fromOpaque(user).takeUnretainedValue()
  let capacity = size * count
  switch context.body {
  case .none:
    return 0
  case .file(let fd, let remaining):
    let wanted = Int(min(Int64(capacity), remaining))
    guard wanted > 0 else { return 0 }
    do {
      let n = try fd.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: wanted))
      // A file shorter than announced would make the server wait for bytes that never come.
      guard n > 0 else {
        context.readFailure = EIO
        return Int(CURL_READFUNC_ABORT)
      }
      context.body = .file(fd, remaining: remaining - Int64(n))
      return n
    } catch let error as Errno {
      context.readFailure = error.code
      return Int(CURL_READFUNC_ABORT)
    } catch {
      context.readFailure = EIO
      return Int(CURL_READFUNC_ABORT)
    }
  case .memory(let data, let offset):
    let n = min(capacity, data.count - offset)
    guard n > 0 else { return 0 }
    data.withUnsafeBytes { raw in
      UnsafeMutableRawPointer(buffer).copyMemory(from: raw.baseAddress! + offset, byteCount: n)
    }
    context.body = .memory(data, offset: offset + n)
    return n
  }
}

private let headerCallback: ingest_curl_data_callback = { buffer, size, count, user in
  let bytes = size * count
  guard let buffer, let user else { return bytes }
  let context = Unmanaged<TransferContext>.fromOpaque(user).takeUnretainedValue()
  // Each response (a 100 Continue included) starts with its status line; keep the last one.
  let line = UnsafeRawBufferPointer(start: buffer, count: bytes)
  if let text = HTTPStatusLine.text(ofHeaderLine: line) { context.statusLine = text }
  return bytes
}

/// Reports the whole body sent (once); ends the request (non-zero) once a stop was asked for.
private let progressCallback: curl_xferinfo_callback = { user, _, _, uploadTotal, uploaded in
  guard let user else { return 0 }
  let context = Unmanaged<TransferContext>.fromOpaque(user).takeUnretainedValue()
  if uploadTotal > 0, uploaded >= uploadTotal, let bodySent = context.bodySent {
    context.bodySent = nil
    bodySent()
  }
  guard let signal = context.stopRequested() else { return 0 }
  context.stoppedBy = signal
  return 1
}

private let discardCallback: ingest_curl_data_callback = { _, size, count, _ in size * count }
