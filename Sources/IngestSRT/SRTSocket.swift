import CSRT
import Glibc
import IngestCore

/// libsrt is loaded (see `CSRT/include/shim.h`: one build for the whole process) and `srt_startup` run once per process, on first use;
/// libsrt's own logging is quieted because every failure reaches the user as a mapped
/// `SinkError`. Nil when ready, else why not.
private let srtStartFailure: String? = {
  guard csrt_load() != 0 else {
    return "cannot load \(CSRT_GNUTLS_SONAME) or \(String(cString: csrt_soname())): "
      + "install libsrt1.5-gnutls or libsrt1.5-openssl"
  }
  let result = csrt_startup()
  csrt_setloglevel(LOG_CRIT)
  return result >= 0 ? nil : "libsrt failed to start"
}()

/// Owns one libsrt socket handle; every libsrt error is turned into a `SinkError` here and only
/// here (`sinkError(code:during:endpoint:)`).
final class SRTSocket {
  private(set) var handle: SRTSOCKET = SRT_INVALID_SOCK
  /// Where the socket connects, for messages (host and port are not secret).
  let endpoint: String

  /// A connection a listener accepted.
  private init(accepted handle: SRTSOCKET, endpoint: String) {
    self.handle = handle
    self.endpoint = endpoint
  }

  init(endpoint: String) throws(SinkError) {
    self.endpoint = endpoint
    if let srtStartFailure {
      throw .unsupported(endpoint: endpoint, reason: srtStartFailure)
    }
    handle = csrt_create_socket()
    guard handle != SRT_INVALID_SOCK else {
      throw Self.sinkError(code: csrt_getlasterror(nil), during: .create, endpoint: endpoint)
    }
  }

  deinit {
    close()
  }

  var isOpen: Bool { handle != SRT_INVALID_SOCK }

  func close() {
    guard handle != SRT_INVALID_SOCK else { return }
    csrt_close(handle)
    handle = SRT_INVALID_SOCK
  }

  func set(_ option: SRT_SOCKOPT, _ value: Int32, name: String) throws(SinkError) {
    var value = value
    try check(
      csrt_setsockflag(handle, option, &value, Int32(MemoryLayout<Int32>.size)), option: name)
  }

  func set(_ option: SRT_SOCKOPT, _ value: Int64, name: String) throws(SinkError) {
    var value = value
    try check(
      csrt_setsockflag(handle, option, &value, Int32(MemoryLayout<Int64>.size)), option: name)
  }

  func set(_ option: SRT_SOCKOPT, _ value: Bool, name: String) throws(SinkError) {
    var value = value
    try check(
      csrt_setsockflag(handle, option, &value, Int32(MemoryLayout<Bool>.size)), option: name)
  }

  func set(_ option: SRT_SOCKOPT, _ value: SRT_TRANSTYPE, name: String) throws(SinkError) {
    var value = value
    try check(
      csrt_setsockflag(handle, option, &value, Int32(MemoryLayout<SRT_TRANSTYPE>.size)),
      option: name)
  }

  /// Sets a string option; the value never appears in an error (passphrase, stream id).
  func set(_ option: SRT_SOCKOPT, secret value: String, name: String) throws(SinkError) {
    var value = value
    let result = value.withUTF8 { bytes in
      csrt_setsockflag(handle, option, bytes.baseAddress, Int32(bytes.count))
    }
    try check(result, option: name)
  }

  func getInt32(_ option: SRT_SOCKOPT) -> Int32? {
    var value: Int32 = 0
    var length = Int32(MemoryLayout<Int32>.size)
    guard csrt_getsockflag(handle, option, &value, &length) == 0 else { return nil }
    return value
  }

  private func check(_ result: Int32, option: String) throws(SinkError) {
    guard result == SRT_ERROR else { return }
    throw Self.sinkError(code: csrt_getlasterror(nil), during: .option(option), endpoint: endpoint)
  }

  /// Resolves `host` and hands its first address to `body`.
  private func withAddress<T>(
    host: String, port: UInt16, passive: Bool = false,
    _ body: (UnsafePointer<sockaddr>, Int32) throws(SinkError) -> T
  ) throws(SinkError) -> T {
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
    hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0)
    var list: UnsafeMutablePointer<addrinfo>?
    let status = getaddrinfo(host, String(port), &hints, &list)
    guard status == 0, let first = list, let address = first.pointee.ai_addr else {
      let reason = status == 0 ? "no address" : String(cString: gai_strerror(status))
      // DNS can fail transiently (network changes on a phone); the sender retries with backoff.
      throw .connect(endpoint: endpoint, reason: "cannot resolve: \(reason)", retryable: true)
    }
    defer { freeaddrinfo(list) }
    return try body(address, Int32(first.pointee.ai_addrlen))
  }

  /// Binds the local address: the listener's, or a rendezvous peer's own port (on the wildcard
  /// address of the peer's family).
  func bind(host: String, port: UInt16) throws(SinkError) {
    let result = try withAddress(host: host, port: port, passive: true) { address, length in
      csrt_bind(handle, address, length)
    }
    guard result == SRT_ERROR else { return }
    throw Self.sinkError(
      code: csrt_getlasterror(nil), during: .bind(port: port), endpoint: endpoint)
  }

  /// Starts listening (one caller at a time).
  func listen() throws(SinkError) {
    guard csrt_listen(handle, 1) == SRT_ERROR else { return }
    throw Self.sinkError(code: csrt_getlasterror(nil), during: .listen, endpoint: endpoint)
  }

  /// Waits up to `timeoutMilliseconds` for a caller and accepts it.
  func accept(timeoutMilliseconds: Int) throws(SinkError) -> SRTSocket {
    let poll = csrt_epoll_create()
    guard poll >= 0 else {
      throw Self.sinkError(code: csrt_getlasterror(nil), during: .accept, endpoint: endpoint)
    }
    defer { csrt_epoll_release(poll) }
    var events = Int32(SRT_EPOLL_IN.rawValue | SRT_EPOLL_ERR.rawValue)
    var ready = SRT_EPOLL_EVENT()
    guard csrt_epoll_add_usock(poll, handle, &events) == 0 else {
      throw Self.sinkError(code: csrt_getlasterror(nil), during: .accept, endpoint: endpoint)
    }
    let waited = csrt_epoll_uwait(poll, &ready, 1, Int64(timeoutMilliseconds))
    guard waited > 0 else {
      // 0 is a timeout that libsrt does not record as an error.
      let code = waited == 0 ? SRT_ETIMEOUT.rawValue : csrt_getlasterror(nil)
      throw Self.sinkError(code: code, during: .accept, endpoint: endpoint)
    }
    var peer = sockaddr_storage()
    var length = Int32(MemoryLayout<sockaddr_storage>.size)
    let accepted = withUnsafeMutablePointer(to: &peer) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { csrt_accept(handle, $0, &length) }
    }
    guard accepted != SRT_INVALID_SOCK else {
      throw Self.sinkError(code: csrt_getlasterror(nil), during: .accept, endpoint: endpoint)
    }
    return SRTSocket(accepted: accepted, endpoint: endpoint)
  }

  /// Resolves `host` and connects, blocking up to the connect timeout set on the socket.
  ///
  /// With `timeoutMilliseconds` (a caller), libsrt connects in the background while this waits
  /// on an epoll for the outcome, at most that long and a second: libsrt's blocking connect
  /// waits up to a second for each handshake answer, so one handshake packet lost on a lossy
  /// path cost a second (connected at 1.9 s against 0.9 s at a 300 ms round trip with 1 %
  /// loss), where in the background libsrt sends the request again after 250 ms.
  func connect(
    host: String, port: UInt16, hasPassphrase: Bool, hasStreamID: Bool,
    timeoutMilliseconds: Int? = nil
  ) throws(SinkError) {
    let during = { [handle] in
      Operation.connect(
        rejectReason: csrt_getrejectreason(handle), hasPassphrase: hasPassphrase,
        hasStreamID: hasStreamID)
    }
    guard let timeoutMilliseconds else {
      let result = try withAddress(host: host, port: port) { address, length in
        csrt_connect(handle, address, length)
      }
      guard result == SRT_ERROR else { return }
      throw Self.sinkError(code: csrt_getlasterror(nil), during: during(), endpoint: endpoint)
    }
    let poll = csrt_epoll_create()
    guard poll >= 0 else {
      throw Self.sinkError(code: csrt_getlasterror(nil), during: during(), endpoint: endpoint)
    }
    defer { csrt_epoll_release(poll) }
    try set(SRTO_RCVSYN, false, name: "rcvsyn")
    var events = Int32(SRT_EPOLL_OUT.rawValue | SRT_EPOLL_ERR.rawValue)
    guard csrt_epoll_add_usock(poll, handle, &events) == 0 else {
      throw Self.sinkError(code: csrt_getlasterror(nil), during: during(), endpoint: endpoint)
    }
    let result = try withAddress(host: host, port: port) { address, length in
      csrt_connect(handle, address, length)
    }
    if result == SRT_ERROR {
      throw Self.sinkError(code: csrt_getlasterror(nil), during: during(), endpoint: endpoint)
    }
    let deadline = ContinuousClock.now + .milliseconds(timeoutMilliseconds + 1000)
    var ready = SRT_EPOLL_EVENT()
    while csrt_getsockstate(handle) == SRTS_CONNECTING, ContinuousClock.now < deadline {
      let left = (deadline - ContinuousClock.now) / .milliseconds(1)
      _ = csrt_epoll_uwait(poll, &ready, 1, max(1, Int64(left.rounded(.up))))
    }
    guard csrt_getsockstate(handle) == SRTS_CONNECTED else {
      // libsrt gives up after its connect timeout with the reason `timeout`; a listener's
      // refusal carries its own reason. Either maps as the blocking connect's error did.
      let reason = csrt_getrejectreason(handle)
      let timedOut = reason == Int32(SRT_REJ_TIMEOUT.rawValue) || reason == 0
      throw Self.sinkError(
        code: timedOut ? SRT_ENOSERVER.rawValue : SRT_ECONNREJ.rawValue, during: during(),
        endpoint: endpoint)
    }
    // Reads are not used; the option goes back to libsrt's default all the same.
    try set(SRTO_RCVSYN, true, name: "rcvsyn")
  }

  /// Sends one live message.
  /// - Returns: `false` when the send timed out with nothing sent (the send buffer stayed full).
  func send(_ message: UnsafeRawBufferPointer) throws(SinkError) -> Bool {
    let result = message.withMemoryRebound(to: CChar.self) { chars in
      csrt_sendmsg2(handle, chars.baseAddress, Int32(chars.count), nil)
    }
    if result != SRT_ERROR { return true }
    let code = csrt_getlasterror(nil)
    switch code {
    case SRT_EASYNCSND.rawValue, SRT_ETIMEOUT.rawValue, SRT_ECONGEST.rawValue:
      return false
    default:
      throw Self.sinkError(code: code, during: .send(bytes: message.count), endpoint: endpoint)
    }
  }

  /// Unacknowledged packets and bytes still in libsrt's send buffer.
  func unacknowledged() -> (packets: Int, bytes: Int)? {
    var blocks = 0
    var bytes = 0
    guard csrt_getsndbuffer(handle, &blocks, &bytes) == 0 else { return nil }
    return (blocks, bytes)
  }

  /// Counters since connect and current buffer levels.
  func statistics() -> SRT_TRACEBSTATS? {
    var stats = SRT_TRACEBSTATS()
    guard csrt_bistats(handle, &stats, 0, 1) == 0 else { return nil }
    return stats
  }

  /// Whether libsrt still considers the socket connected.
  var isConnected: Bool { csrt_getsockstate(handle) == SRTS_CONNECTED }

  private static func lastErrorText() -> String {
    guard let text = csrt_getlasterror_str() else { return "unknown error" }
    return String(cString: text)
  }

  /// What a failed libsrt call was doing, for `sinkError`.
  enum Operation {
    case create
    case option(String)
    /// `srt_connect`, with the socket's reject reason and whether secrets were configured
    /// (never the secrets themselves).
    case connect(rejectReason: Int32, hasPassphrase: Bool, hasStreamID: Bool)
    case send(bytes: Int)
    case bind(port: UInt16)
    case listen
    /// Waiting for a caller (listener mode) and accepting it.
    case accept
  }

  /// The one mapping of libsrt errors (`srt_getlasterror` and, for connects, the reject reason)
  /// to `SinkError`. Secrets never enter the message: only whether a passphrase or a stream id
  /// was configured.
  static func sinkError(code: Int32, during operation: Operation, endpoint: String) -> SinkError {
    let text = lastErrorText()
    switch operation {
    case .create:
      return .connect(
        endpoint: endpoint, reason: "cannot create a socket: \(text)", retryable: true)
    case .option(let name):
      return .unsupported(endpoint: endpoint, reason: "libsrt refused option \(name): \(text)")
    case .bind(let port):
      // Another process holds the port: waiting will not free it.
      return .connect(
        endpoint: endpoint, reason: "cannot bind UDP port \(port): \(text)", retryable: false)
    case .listen:
      return .connect(endpoint: endpoint, reason: "cannot listen: \(text)", retryable: false)
    case .accept:
      if code == SRT_ETIMEOUT.rawValue {
        return .timeout(
          endpoint: endpoint, operation: "waiting for a caller",
          reason: "no caller connected (conntimeo)")
      }
      return .connect(
        endpoint: endpoint, reason: "cannot accept a caller: \(text)", retryable: true)
    case .send(let bytes):
      if code == SRT_ELARGEMSG.rawValue {
        return .unsupported(
          endpoint: endpoint, reason: "message of \(bytes) bytes is larger than the payload size")
      }
      return .write(endpoint: endpoint, reason: "connection lost: \(text)", retryable: true)
    case .connect(let rejectReason, let hasPassphrase, let hasStreamID):
      guard code == SRT_ECONNREJ.rawValue else {
        if code == SRT_ENOSERVER.rawValue {
          return .timeout(
            endpoint: endpoint, operation: "connect",
            reason: "no listener answered (conntimeo)")
        }
        return .connect(
          endpoint: endpoint, reason: "libsrt error \(code): \(text)", retryable: true)
      }
      return rejection(
        rejectReason, endpoint: endpoint, hasPassphrase: hasPassphrase, hasStreamID: hasStreamID)
    }
  }

  /// A listener rejected the connection: why, and whether asking again can help.
  private static func rejection(
    _ rejectReason: Int32, endpoint: String, hasPassphrase: Bool, hasStreamID: Bool
  ) -> SinkError {
    let reason = UInt32(truncatingIfNeeded: rejectReason)
    switch reason {
    case SRT_REJ_BADSECRET.rawValue:
      return .authentication(endpoint: endpoint, reason: "wrong passphrase")
    case SRT_REJ_UNSECURE.rawValue:
      return .authentication(
        endpoint: endpoint,
        reason: hasPassphrase
          ? "the listener expects no passphrase but one is set"
          : "the listener requires a passphrase and none is set")
    case SRT_REJ_VERSION.rawValue, SRT_REJ_MESSAGEAPI.rawValue, SRT_REJ_CONGESTION.rawValue,
      SRT_REJ_FILTER.rawValue, SRT_REJ_GROUP.rawValue:
      return .unsupported(
        endpoint: endpoint,
        reason: "the listener rejected incompatible settings (\(rejectText(rejectReason)))")
    case SRT_REJ_PEER.rawValue where hasStreamID:
      // Access-control callbacks that refuse a stream id without a code surface as a plain peer
      // rejection; retrying the same stream id would be refused again.
      return .publishRefused(
        endpoint: endpoint, reason: "the listener rejected the stream id", retryable: false)
    default:
      break
    }
    guard rejectReason >= 1000 else {
      return .connect(
        endpoint: endpoint, reason: "rejected (\(rejectText(rejectReason)))", retryable: true)
    }
    let text = "rejected with code \(rejectReason) (\(rejectText(rejectReason)))"
    switch rejectReason {
    case 1401:
      return .authentication(endpoint: endpoint, reason: text)
    // Overload, a resource still held by a previous session, server trouble: worth a retry.
    case 1402, 1409, 1423, 1500, 1502, 1503, 1507:
      return .publishRefused(endpoint: endpoint, reason: text, retryable: true)
    default:
      return .publishRefused(
        endpoint: endpoint, reason: hasStreamID ? "\(text); the stream id was refused" : text,
        retryable: false)
    }
  }

  private static func rejectText(_ reason: Int32) -> String {
    switch reason {
    case 1000: return "fallback"
    case 1001: return "key not supported"
    case 1002: return "bad file path"
    case 1003: return "host not found"
    case 1400: return "bad request"
    case 1401: return "unauthorized"
    case 1402: return "overload"
    case 1403: return "forbidden"
    case 1404: return "not found"
    case 1405: return "bad mode"
    case 1406: return "unacceptable"
    case 1409: return "conflict"
    case 1415: return "media type not supported"
    case 1423: return "locked"
    case 1424: return "failed dependency"
    case 1500: return "internal server error"
    case 1501: return "unimplemented"
    case 1502: return "gateway error"
    case 1503: return "service down"
    case 1505: return "version not supported"
    case 1507: return "no room"
    default:
      guard let text = csrt_rejectreason_str(reason) else { return "reason \(reason)" }
      return String(cString: text)
    }
  }
}
