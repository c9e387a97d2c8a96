#if canImport(Glibc)
  import Glibc
#endif

/// Resolves `.local` names over multicast DNS on every IPv4 interface that can multicast.
/// Browsers hide their addresses behind such names in their ICE candidates (Chromium by
/// default); libnice does not resolve them, so without this the connection waits for the
/// browser's own checks to reach us first, which did not happen within 15 s in 3 of 8
/// sessions to Chromium without the benchmark's relay (docs/whip.md).
enum MDNSResolver {
  static let group = "224.0.0.251"
  static let port: UInt16 = 5353

  /// The IPv4 address of each name that answered within `timeoutMilliseconds` (the query
  /// is sent again every 250 ms); names no one answered for are missing.
  static func resolve(_ names: [String], timeoutMilliseconds: Int32 = 1000) -> [String: String] {
    let wanted = Set(names.map { $0.lowercased() })
    guard !wanted.isEmpty else { return [:] }
    let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    guard fd >= 0 else { return [:] }
    defer { close(fd) }
    var on: Int32 = 1
    let size = socklen_t(MemoryLayout<Int32>.size)
    _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, size)
    _ = setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, size)
    // On port 5353, answers sent to the group reach us; where another responder holds the
    // port without sharing it, an ephemeral port makes it a one-shot query (RFC 6762 6.7),
    // answered to its source.
    if bind(fd, port: port) != 0, bind(fd, port: 0) != 0 { return [:] }
    let interfaces = multicastInterfaces()
    for address in interfaces {
      var membership = ip_mreq(
        imr_multiaddr: in_addr(s_addr: inet_addr(group)), imr_interface: address)
      _ = setsockopt(
        fd, Int32(IPPROTO_IP), IP_ADD_MEMBERSHIP, &membership,
        socklen_t(MemoryLayout<ip_mreq>.size))
    }
    var found: [String: String] = [:]
    var waited: Int32 = 0
    var buffer = [UInt8](repeating: 0, count: 9000)
    while waited < timeoutMilliseconds {
      let missing = wanted.subtracting(found.keys)
      if missing.isEmpty { break }
      send(MDNSMessage.query(for: missing.sorted()), on: fd, through: interfaces)
      var slice: Int32 = 0
      while slice < 250 {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let started = monotonicMilliseconds()
        let ready = poll(&descriptor, 1, 250 - slice)
        slice += max(1, Int32(monotonicMilliseconds() - started))
        guard ready > 0 else { continue }
        let length = recv(fd, &buffer, buffer.count, 0)
        guard length > 0 else { continue }
        for (name, address) in MDNSMessage.addresses(in: Array(buffer[0..<length]))
        where wanted.contains(name) {
          found[name] = address
        }
        if wanted.isSubset(of: found.keys) { break }
      }
      waited += slice
    }
    return found
  }

  private static func bind(_ fd: Int32, port: UInt16) -> Int32 {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr = in_addr(s_addr: INADDR_ANY)
    return withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
  }

  /// The query to the group through each interface (the default route's alone would miss a
  /// peer on another link).
  private static func send(_ query: [UInt8], on fd: Int32, through interfaces: [in_addr]) {
    var destination = sockaddr_in()
    destination.sin_family = sa_family_t(AF_INET)
    destination.sin_port = port.bigEndian
    destination.sin_addr = in_addr(s_addr: inet_addr(group))
    for var interface in interfaces {
      _ = setsockopt(
        fd, Int32(IPPROTO_IP), IP_MULTICAST_IF, &interface, socklen_t(MemoryLayout<in_addr>.size))
      _ = withUnsafePointer(to: &destination) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          sendto(fd, query, query.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
    }
  }

  /// The IPv4 address of every interface that is up and can multicast.
  private static func multicastInterfaces() -> [in_addr] {
    var list: UnsafeMutablePointer<ifaddrs>?
    guard getifaddrs(&list) == 0 else { return [] }
    defer { freeifaddrs(list) }
    var addresses: [in_addr] = []
    var entry = list
    while let current = entry {
      defer { entry = current.pointee.ifa_next }
      let flags = Int32(current.pointee.ifa_flags)
      guard let address = current.pointee.ifa_addr, address.pointee.sa_family == AF_INET,
        flags & Int32(IFF_UP) != 0, flags & Int32(IFF_MULTICAST) != 0,
        flags & Int32(IFF_LOOPBACK) == 0
      else { continue }
      addresses.append(
        address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr })
    }
    return addresses
  }

  private static func monotonicMilliseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
  }
}
