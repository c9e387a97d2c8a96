import Foundation
import Glibc
import IngestTestSupport

/// A TCP relay on a loopback port in front of an RTMP server that closes a connection as soon
/// as the publisher sends an Enhanced RTMP extended video tag (`0x90`, FourCC `hvc1`: the HEVC
/// SequenceStart): a server that drops a stream it cannot read.
final class ExtendedTagDroppingRelay: @unchecked Sendable {
  let port: Int
  private let listener: Int32
  private let upstreamPort: Int
  private let lock = NSLock()
  private var sockets: [Int32] = []
  private var stopped = false
  /// Connections closed for an extended tag.
  var dropped: Int {
    lock.lock()
    defer { lock.unlock() }
    return droppedCount
  }
  private var droppedCount = 0

  init(upstreamPort: Int) throws {
    self.upstreamPort = upstreamPort
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    listener = fd
    var address = Self.loopback(port: 0)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
      }
    }
    guard fd >= 0, bound, listen(fd, 8) == 0 else {
      throw LoopbackServers.Failure("relay socket: errno \(errno)")
    }
    port = Int(UInt16(bigEndian: address.sin_port))
    Thread.detachNewThread { [self] in acceptLoop() }
  }

  deinit { stop() }

  /// Closes the listening socket and ends every connection.
  func stop() {
    lock.lock()
    guard !stopped else {
      lock.unlock()
      return
    }
    stopped = true
    let open = sockets
    lock.unlock()
    shutdown(listener, Int32(SHUT_RDWR))
    close(listener)
    // The relay threads close their sockets once both directions have ended.
    for fd in open { shutdown(fd, Int32(SHUT_RDWR)) }
  }

  private static func loopback(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return address
  }

  private func acceptLoop() {
    while true {
      let client = accept(listener, nil, nil)
      guard client >= 0 else { return }
      let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
      var address = Self.loopback(port: upstreamPort)
      let connected = withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
      }
      lock.lock()
      let isStopped = stopped
      if connected && !isStopped { sockets += [client, server] }
      lock.unlock()
      guard connected, !isStopped else {
        close(client)
        close(server)
        continue
      }
      Thread.detachNewThread { [self] in relay(client: client, server: server) }
    }
  }

  /// Relays one connection both ways. When the publisher sends an extended tag, the server's
  /// side is shut and the publisher's is reset (SO_LINGER 0), so its next write fails at once,
  /// as when a server drops the connection.
  private func relay(client: Int32, server: Int32) {
    let answered = DispatchSemaphore(value: 0)
    Thread.detachNewThread { [self] in
      _ = pump(from: server, to: client, watch: false)
      // The server left: so does the publisher's side of the relay.
      shutdown(client, Int32(SHUT_RD))
      answered.signal()
    }
    let sawExtendedTag = pump(from: client, to: server, watch: true)
    if sawExtendedTag {
      lock.lock()
      droppedCount += 1
      lock.unlock()
      var reset = linger(l_onoff: 1, l_linger: 0)
      setsockopt(
        client, SOL_SOCKET, SO_LINGER, &reset, socklen_t(MemoryLayout<linger>.size))
    }
    shutdown(server, Int32(SHUT_RDWR))
    answered.wait()
    lock.lock()
    sockets.removeAll { $0 == client || $0 == server }
    lock.unlock()
    close(client)
    close(server)
  }

  /// Copies bytes until either side closes or, when `watch`, the extended tag's first five
  /// bytes pass (kept across reads, in case a read splits them): then true, nothing of that
  /// read forwarded.
  private func pump(from source: Int32, to destination: Int32, watch: Bool) -> Bool {
    let marker: [UInt8] = [0x90, 0x68, 0x76, 0x63, 0x31]
    var buffer = [UInt8](repeating: 0, count: 65_536)
    var tail: [UInt8] = []
    while true {
      let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
      guard count > 0 else { return false }
      if watch {
        let seen = tail + buffer[0..<count]
        if seen.windows(ofCount: marker.count).contains(where: { $0.elementsEqual(marker) }) {
          return true
        }
        tail = Array(seen.suffix(marker.count - 1))
      }
      let sent = buffer.withUnsafeBytes {
        send(destination, $0.baseAddress, count, Int32(MSG_NOSIGNAL))
      }
      guard sent == count else { return false }
    }
  }
}

extension Array {
  /// Every run of `count` consecutive elements, in order.
  fileprivate func windows(ofCount count: Int) -> [ArraySlice<Element>] {
    guard self.count >= count else { return [] }
    return (0...(self.count - count)).map { self[$0..<$0 + count] }
  }
}
