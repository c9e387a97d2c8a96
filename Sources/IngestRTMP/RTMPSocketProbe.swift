import Glibc

/// Reads the kernel's figures of the TCP connection libavformat opened for an RTMP publish:
/// bytes not yet acknowledged by the server (`SIOCOUTQ`: in flight and not yet sent) and the
/// smoothed round trip (`TCP_INFO`).
///
/// libavformat keeps its socket to itself (the descriptor is in private structures), so the
/// probe finds it: the stream socket of this process whose peer is the publish address's
/// port, the newest such (the one just connected). RTMPS runs TLS over the same socket, so
/// the figures count TLS records, which is what the link carries.
struct RTMPSocketProbe {
  let descriptor: Int32

  /// The connected TCP socket to `port` opened last, or nil when none is found.
  static func find(peerPort port: Int) -> RTMPSocketProbe? {
    guard let directory = opendir("/proc/self/fd") else { return nil }
    defer { closedir(directory) }
    var newest: Int32?
    while let entry = readdir(directory) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
      guard let descriptor = Int32(name), isStreamSocket(descriptor),
        peerPort(of: descriptor) == port
      else { continue }
      newest = max(newest ?? descriptor, descriptor)
    }
    return newest.map(RTMPSocketProbe.init)
  }

  /// Bytes written to the socket that the server has not acknowledged yet; nil on error.
  var unacknowledgedBytes: Int? {
    var count: Int32 = 0
    // SIOCOUTQ (TIOCOUTQ): not sent plus not acknowledged.
    guard ioctl(descriptor, UInt(TIOCOUTQ), &count) == 0 else { return nil }
    return Int(count)
  }

  /// The kernel's smoothed round trip, in milliseconds; nil when unknown.
  var roundTripMilliseconds: Double? {
    var info = tcp_info()
    var length = socklen_t(MemoryLayout<tcp_info>.size)
    guard getsockopt(descriptor, Int32(IPPROTO_TCP), TCP_INFO, &info, &length) == 0,
      info.tcpi_rtt > 0
    else { return nil }
    return Double(info.tcpi_rtt) / 1000
  }

  private static func isStreamSocket(_ descriptor: Int32) -> Bool {
    var type: Int32 = 0
    var length = socklen_t(MemoryLayout<Int32>.size)
    return getsockopt(descriptor, SOL_SOCKET, SO_TYPE, &type, &length) == 0
      && type == Int32(SOCK_STREAM.rawValue)
  }

  private static func peerPort(of descriptor: Int32) -> Int? {
    var address = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let result = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &length) }
    }
    guard result == 0,
      Int32(address.ss_family) == AF_INET || Int32(address.ss_family) == AF_INET6
    else { return nil }
    // sin_port and sin6_port are both at offset 2, in network byte order.
    return withUnsafeBytes(of: address) { raw in
      Int(UInt16(bigEndian: raw.load(fromByteOffset: 2, as: UInt16.self)))
    }
  }
}
