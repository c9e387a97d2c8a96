import IngestCore
import IngestPOSIX

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Measures the round trip to an SRT listener before connecting, with the first step of SRT's
/// handshake: an induction request, which a listener answers statelessly (a SYN cookie), so
/// the probe makes no connection at the receiver. `latency=auto` needs the round trip before
/// the connection, because the latency is fixed when it is made, and a receiver that ends its
/// stream when its first caller leaves could not take a second connection.
///
/// The request is the 16-byte control header (handshake, destination socket 0) and the
/// 48-byte handshake body of an HSv5 caller's induction: version 4, extension field 2
/// (`UDT_DGRAM`), handshake type 1 (induction), SYN cookie 0.
enum SRTHandshakeProbe {
  /// The round trip of the first answer to `attempts` inductions sent together to
  /// `host:port`, in milliseconds; nil when none came within `timeoutMilliseconds`.
  static func roundTripMilliseconds(
    host: String, port: UInt16, attempts: Int = 3, timeoutMilliseconds: Int = 1000
  ) -> Double? {
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
    hints.ai_flags = AI_NUMERICSERV
    var list: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list,
      let address = first.pointee.ai_addr
    else { return nil }
    defer { freeaddrinfo(list) }
    let descriptor = socket(first.pointee.ai_family, Int32(SOCK_DGRAM.rawValue), 0)
    guard descriptor >= 0 else { return nil }
    defer { FileDescriptor(rawValue: descriptor).close() }
    guard connect(descriptor, address, first.pointee.ai_addrlen) == 0 else { return nil }
    // All at once, and the first answer counts: one round trip of delay before connecting,
    // and a lost request or a slow answer does not decide the figure.
    let started = SystemClock().now()
    var sentAny = false
    for attempt in 0..<max(attempts, 1) {
      let request = inductionRequest(socketID: UInt32(truncatingIfNeeded: 0x1000 + attempt))
      let sent = request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
      sentAny = sentAny || sent == request.count
    }
    guard sentAny, awaitAnswer(descriptor, timeoutMilliseconds: timeoutMilliseconds) else {
      return nil
    }
    return (SystemClock().now() - started).inMilliseconds
  }

  /// The induction request, in network byte order.
  static func inductionRequest(socketID: UInt32) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(64)
    func word(_ value: UInt32) {
      bytes += [
        UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16),
        UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value),
      ]
    }
    word(0x8000_0000)  // control packet, type 0: handshake
    word(0)  // type-specific information
    word(0)  // timestamp
    word(0)  // destination socket: none yet
    word(4)  // version: an HSv5 caller's induction says 4
    word(2)  // encryption field 0, extension field 2 (UDT_DGRAM)
    word(socketID &* 2_654_435_761)  // initial packet sequence number
    word(1500)  // MTU
    word(8192)  // flow window
    word(1)  // handshake type: induction
    word(socketID)  // the caller's socket id
    word(0)  // SYN cookie
    for _ in 0..<4 { word(0) }  // peer address
    return bytes
  }

  /// Waits for a handshake answer (a control packet of type 0) on `descriptor`.
  private static func awaitAnswer(_ descriptor: Int32, timeoutMilliseconds: Int) -> Bool {
    let deadline =
      SystemClock().now() + .milliseconds(Int64(timeoutMilliseconds))
    var buffer = [UInt8](repeating: 0, count: 1500)
    while true {
      let left = (deadline - SystemClock().now()).wholeMilliseconds
      guard left > 0 else { return false }
      var poll = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
      let ready = FileDescriptor.retryingOnInterrupt(
        { systemPoll(&poll, 1, Int32(left)) }, failed: { $0 < 0 })
      guard case .success(let readable) = ready, readable > 0 else { return false }
      let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
      // A refused port answers with an ICMP error, which a connected UDP socket reports.
      guard count >= 0 else { return false }
      if count >= 64 && buffer[0] == 0x80 && buffer[1] == 0 { return true }
    }
  }
}

// poll(2) under another name: the function above has a variable called `poll`.
private func systemPoll(_ fds: UnsafeMutablePointer<pollfd>, _ count: nfds_t, _ timeout: Int32)
  -> Int32
{
  poll(fds, count, timeout)
}
