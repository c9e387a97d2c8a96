import Foundation
import Glibc
import IngestTestSupport

/// A private nginx with the WebDAV module accepting PUT under `www/` (plain HTTP, and HTTPS with
/// a test CA made by openssl when `tls` is set). Fault switches are flag files that the config
/// tests with `if (-f …)`, so the server answers 503 or 403 without a restart.
final class NginxWebDAV {
  let directory: URL
  let port: Int
  let tlsPort: Int?
  private(set) var child: ChildProcess?
  private var starts = 0

  /// The tree the server stores PUTs in.
  var root: URL { directory.appending(path: "www") }
  /// The CA certificate that signed the server's certificate (TLS only).
  var caFile: URL { directory.appending(path: "ca.pem") }
  var accessLog: String { LoopbackServers.text(of: directory.appending(path: "access.log")) }

  /// - Parameter requiredAuthorization: when set, requests without exactly this `Authorization`
  ///   value get 401.
  init(directory: URL, tls: Bool = false, requiredAuthorization: String? = nil) throws {
    self.directory = directory
    port = try LoopbackServers.freePort(SOCK_STREAM)
    tlsPort = tls ? try LoopbackServers.freePort(SOCK_STREAM) : nil
    for name in ["www", "body-temp", "temp"] {
      try FileManager.default.createDirectory(
        at: directory.appending(path: name), withIntermediateDirectories: true)
    }
    let prefix = directory.path
    var tlsListen = ""
    if let tlsPort {
      try TestCertificates.make(in: directory)
      tlsListen = """
        listen 127.0.0.1:\(tlsPort) ssl;
            ssl_certificate \(prefix)/server.pem;
            ssl_certificate_key \(prefix)/server.key;
        """
    }
    let auth =
      requiredAuthorization.map {
        "if ($http_authorization != \"\($0)\") { return 401; }"
      } ?? ""
    let config = """
      daemon off;
      master_process off;
      pid \(prefix)/nginx.pid;
      error_log stderr notice;
      events { worker_connections 64; }
      http {
        access_log \(prefix)/access.log;
        client_body_temp_path \(prefix)/body-temp;
        proxy_temp_path \(prefix)/temp;
        fastcgi_temp_path \(prefix)/temp;
        uwsgi_temp_path \(prefix)/temp;
        scgi_temp_path \(prefix)/temp;
        server {
          listen 127.0.0.1:\(port);
          \(tlsListen)
          root \(prefix)/www;
          client_max_body_size 0;
          location / {
            if (-f \(prefix)/flag-503) { return 503; }
            if (-f \(prefix)/flag-403) { return 403; }
            \(auth)
            dav_methods PUT;
            create_full_put_path on;
            dav_access user:rw group:r all:r;
          }
        }
      }
      """
    try config.write(to: directory.appending(path: "nginx.conf"), atomically: true, encoding: .utf8)
    try start()
  }

  deinit { kill() }

  var url: String { "http://127.0.0.1:\(port)/rec/" }
  var tlsURL: String { "https://127.0.0.1:\(tlsPort ?? 0)/rec/" }

  /// Starts nginx and returns once it accepts connections.
  func start() throws {
    starts += 1
    let prefix = directory.path
    let process = try ChildProcess(
      "nginx", ["-p", prefix + "/", "-c", prefix + "/nginx.conf", "-e", "stderr"],
      directory: directory, name: "nginx-\(starts)")
    child = process
    try LoopbackServers.waitUntil("nginx on port \(port)") {
      guard process.process.isRunning else {
        throw LoopbackServers.Failure("nginx exited: \(process.stderr)")
      }
      return Self.accepts(port: port)
    }
  }

  /// SIGKILLs nginx by pid (also what `deinit` does).
  func kill() { child?.kill() }

  /// Turns a fault on or off: "503" or "403".
  func setFlag(_ name: String, _ on: Bool) {
    let path = directory.appending(path: "flag-\(name)").path
    if on {
      _ = FileManager.default.createFile(atPath: path, contents: nil)
    } else {
      try? FileManager.default.removeItem(atPath: path)
    }
  }

  /// How many requests got `status` so far.
  func count(status: Int) -> Int {
    accessLog.split(separator: "\n").filter { $0.contains("\" \(status) ") }.count
  }

  /// Successful (201/204) PUTs of `path` (e.g. "/rec/seg00000.ts").
  func successfulPuts(of path: String) -> Int {
    accessLog.split(separator: "\n").filter {
      $0.contains("\"PUT \(path) ") && ($0.contains("\" 201 ") || $0.contains("\" 204 "))
    }.count
  }

  /// Files nginx is still receiving (a PUT in progress or aborted leaves nothing here).
  var temporaryFiles: [String] {
    (try? FileManager.default.contentsOfDirectory(
      atPath: directory.appending(path: "body-temp").path))
      ?? []
  }

  static func accepts(port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    return withUnsafePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
      }
    }
  }
}

/// A TCP relay in front of a server that holds each of its first `slowConnections` connections
/// for `delay` seconds before relaying a byte: a server that answers slowly. With `reading`, it
/// takes in what the client sends meanwhile and passes it on after the delay: a server that
/// has the whole request and is slow to store it (the client may be gone by then).
final class SlowRelay {
  let port: Int
  let child: ChildProcess

  init(
    directory: URL, upstream: Int, delay: Double, slowConnections: Int, reading: Bool = false
  ) throws {
    port = try LoopbackServers.freePort(SOCK_STREAM)
    let script = directory.appending(path: "slow-relay.py")
    try Self.source.write(to: script, atomically: true, encoding: .utf8)
    child = try ChildProcess(
      "python3",
      [
        script.path, String(port), String(upstream), String(delay), String(slowConnections),
        reading ? "read" : "hold",
      ],
      directory: directory, name: "slow-relay")
    try LoopbackServers.waitUntil("the relay on port \(port)") {
      guard child.process.isRunning else {
        throw LoopbackServers.Failure("relay exited: \(child.stderr)")
      }
      return child.stdout.contains("ready")
    }
  }

  deinit { child.kill() }

  var url: String { "http://127.0.0.1:\(port)/rec/" }

  private static let source = """
    import select, socket, sys, threading, time
    port, upstream, delay, slow = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
    reading = sys.argv[5] == "read"
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen(16)
    print("ready", flush=True)

    def pipe(a, b):
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                b.sendall(data)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def relay(client, hold):
        taken, ended = b"", False
        if hold and reading:
            # Take what the client sends during the hold, so that it is all here even if the
            # client is gone before the server gets it.
            until = time.monotonic() + delay
            while not ended and time.monotonic() < until:
                ready, _, _ = select.select([client], [], [], max(0, until - time.monotonic()))
                if not ready:
                    continue
                try:
                    data = client.recv(65536)
                except OSError:
                    data = b""
                taken += data
                ended = not data
            time.sleep(max(0, until - time.monotonic()))
        elif hold:
            time.sleep(delay)
        try:
            up = socket.create_connection(("127.0.0.1", upstream))
        except OSError:
            client.close()
            return
        up.sendall(taken)
        if ended:
            up.shutdown(socket.SHUT_WR)
        else:
            threading.Thread(target=pipe, args=(client, up), daemon=True).start()
        pipe(up, client)

    count = 0
    while True:
        client, _ = server.accept()
        count += 1
        threading.Thread(target=relay, args=(client, count <= slow), daemon=True).start()
    """
}
