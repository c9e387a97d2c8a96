import CSRT
import Glibc
import IngestCore

/// `srt_startup` runs once per process, on first use; libsrt's own logging is quieted because
/// every failure reaches the user as a mapped `SinkError`.
private let srtLibraryStarted: Bool = {
  let result = srt_startup()
  srt_setloglevel(LOG_CRIT)
  return result >= 0
}()

/// Owns one libsrt socket handle; every libsrt error is turned into a `SinkError` here and only
/// here.
final class SRTSocket {
  private(set) var handle: SRTSOCKET = SRT_INVALID_SOCK
  /// Where the socket connects, for messages (host and port are not secret).
  let endpoint: String

  init(endpoint: String) throws(SinkError) {
    self.endpoint = endpoint
    guard srtLibraryStarted else { throw .fatal("SRT: libsrt failed to start") }
    handle = srt_create_socket()
    guard handle != SRT_INVALID_SOCK else {
      throw .retryable("SRT: cannot create a socket: \(Self.lastErrorText())")
    }
  }

  deinit {
    close()
  }

  var isOpen: Bool { handle != SRT_INVALID_SOCK }

  func close() {
    guard handle != SRT_INVALID_SOCK else { return }
    srt_close(handle)
    handle = SRT_INVALID_SOCK
  }

  func set(_ option: SRT_SOCKOPT, _ value: Int32, name: String) throws(SinkError) {
    var value = value
    try check(
      srt_setsockflag(handle, option, &value, Int32(MemoryLayout<Int32>.size)), option: name)
  }

  func set(_ option: SRT_SOCKOPT, _ value: Int64, name: String) throws(SinkError) {
    var value = value
    try check(
      srt_setsockflag(handle, option, &value, Int32(MemoryLayout<Int64>.size)), option: name)
  }

  func set(_ option: SRT_SOCKOPT, _ value: Bool, name: String) throws(SinkError) {
    var value = value
    try check(
      srt_setsockflag(handle, option, &value, Int32(MemoryLayout<Bool>.size)), option: name)
  }

  func set(_ option: SRT_SOCKOPT, _ value: SRT_TRANSTYPE, name: String) throws(SinkError) {
    var value = value
    try check(
      srt_setsockflag(handle, option, &value, Int32(MemoryLayout<SRT_TRANSTYPE>.size)),
      option: name)
  }

  /// Sets a string option; the value never appears in an error (passphrase, stream id).
  func set(_ option: SRT_SOCKOPT, secret value: String, name: String) throws(SinkError) {
    var value = value
    let result = value.withUTF8 { bytes in
      srt_setsockflag(handle, option, bytes.baseAddress, Int32(bytes.count))
    }
    try check(result, option: name)
  }

  func getInt32(_ option: SRT_SOCKOPT) -> Int32? {
    var value: Int32 = 0
    var length = Int32(MemoryLayout<Int32>.size)
    guard srt_getsockflag(handle, option, &value, &length) == 0 else { return nil }
    return value
  }

  private func check(_ result: Int32, option: String) throws(SinkError) {
    guard result == SRT_ERROR else { return }
    throw .fatal("SRT: libsrt refused option \(option): \(Self.lastErrorText())")
  }

  /// Resolves `host` and connects, blocking up to the connect timeout set on the socket.
  func connect(
    host: String, port: UInt16, hasPassphrase: Bool, hasStreamID: Bool
  ) throws(SinkError) {
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
    hints.ai_flags = AI_NUMERICSERV
    var list: UnsafeMutablePointer<addrinfo>?
    let status = getaddrinfo(host, String(port), &hints, &list)
    guard status == 0, let first = list, let address = first.pointee.ai_addr else {
      let reason = status == 0 ? "no address" : String(cString: gai_strerror(status))
      // DNS can fail transiently (network changes on a phone); the sender retries with backoff.
      throw .retryable("SRT: cannot resolve \(endpoint): \(reason)")
    }
    defer { freeaddrinfo(list) }
    guard srt_connect(handle, address, Int32(first.pointee.ai_addrlen)) == SRT_ERROR else { return }
    let code = srt_getlasterror(nil)
    let reason = srt_getrejectreason(handle)
    throw Self.connectFailure(
      code: code, rejectReason: reason, endpoint: endpoint, hasPassphrase: hasPassphrase,
      hasStreamID: hasStreamID)
  }

  /// Sends one live message.
  /// - Returns: `false` when the send timed out with nothing sent (the send buffer stayed full).
  func send(_ message: UnsafeRawBufferPointer) throws(SinkError) -> Bool {
    let result = message.withMemoryRebound(to: CChar.self) { chars in
      srt_sendmsg2(handle, chars.baseAddress, Int32(chars.count), nil)
    }
    if result != SRT_ERROR { return true }
    let code = srt_getlasterror(nil)
    switch code {
    case SRT_EASYNCSND.rawValue, SRT_ETIMEOUT.rawValue, SRT_ECONGEST.rawValue:
      return false
    case SRT_ELARGEMSG.rawValue:
      throw .fatal("SRT: message of \(message.count) bytes is larger than the payload size")
    default:
      throw .retryable("SRT: connection to \(endpoint) lost: \(Self.lastErrorText())")
    }
  }

  /// Unacknowledged packets and bytes still in libsrt's send buffer.
  func unacknowledged() -> (packets: Int, bytes: Int)? {
    var blocks = 0
    var bytes = 0
    guard srt_getsndbuffer(handle, &blocks, &bytes) == 0 else { return nil }
    return (blocks, bytes)
  }

  /// Counters since connect and current buffer levels.
  func statistics() -> SRT_TRACEBSTATS? {
    var stats = SRT_TRACEBSTATS()
    guard srt_bistats(handle, &stats, 0, 1) == 0 else { return nil }
    return stats
  }

  /// Whether libsrt still considers the socket connected.
  var isConnected: Bool { srt_getsockstate(handle) == SRTS_CONNECTED }

  private static func lastErrorText() -> String {
    guard let text = srt_getlasterror_str() else { return "unknown error" }
    return String(cString: text)
  }

  /// Maps a failed `srt_connect` to retryable or fatal. Secrets are never part of the message:
  /// only whether a passphrase or a stream id was configured.
  static func connectFailure(
    code: Int32, rejectReason: Int32, endpoint: String, hasPassphrase: Bool, hasStreamID: Bool
  ) -> SinkError {
    let prefix = "SRT: listener at \(endpoint)"
    guard code == SRT_ECONNREJ.rawValue else {
      if code == SRT_ENOSERVER.rawValue {
        return .retryable("SRT: no listener answered at \(endpoint) (connection timed out)")
      }
      return .retryable("SRT: cannot connect to \(endpoint) (libsrt error \(code))")
    }
    let reason = UInt32(truncatingIfNeeded: rejectReason)
    switch reason {
    case SRT_REJ_BADSECRET.rawValue:
      return .fatal("\(prefix) rejected the connection: wrong passphrase")
    case SRT_REJ_UNSECURE.rawValue:
      return .fatal(
        hasPassphrase
          ? "\(prefix) rejected the connection: it expects no passphrase but one is set"
          : "\(prefix) rejected the connection: it requires a passphrase and none is set")
    case SRT_REJ_VERSION.rawValue, SRT_REJ_MESSAGEAPI.rawValue, SRT_REJ_CONGESTION.rawValue,
      SRT_REJ_FILTER.rawValue, SRT_REJ_GROUP.rawValue:
      return .fatal(
        "\(prefix) rejected the connection: incompatible settings (\(rejectText(rejectReason)))")
    case SRT_REJ_PEER.rawValue where hasStreamID:
      // Access-control callbacks that refuse a stream id without a code surface as a plain peer
      // rejection; retrying the same stream id would be refused again.
      return .fatal("\(prefix) rejected the connection and the stream id with it")
    default:
      break
    }
    if rejectReason >= 1000 {
      let text =
        "\(prefix) rejected the connection (code \(rejectReason): \(rejectText(rejectReason)))"
      switch rejectReason {
      // Overload, a resource still held by a previous session, server trouble: worth a retry.
      case 1402, 1409, 1423, 1500, 1502, 1503, 1507: return .retryable(text)
      default:
        return .fatal(hasStreamID ? "\(text); the stream id was refused" : text)
      }
    }
    return .retryable("\(prefix) rejected the connection (\(rejectText(rejectReason)))")
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
      guard let text = srt_rejectreason_str(reason) else { return "reason \(reason)" }
      return String(cString: text)
    }
  }
}
