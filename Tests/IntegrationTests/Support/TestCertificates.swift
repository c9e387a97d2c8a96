import Foundation
import IngestTestSupport

/// A test certificate authority and a server certificate for 127.0.0.1 signed by it (openssl),
/// for the TLS servers of the tests: a client that trusts `ca.pem` accepts the server, one that
/// trusts the system's authorities refuses it.
enum TestCertificates {
  /// Writes `ca.pem` (with `ca.key`) and `server.pem` (with `server.key`) into `directory`.
  static func make(in directory: URL) throws {
    let d = directory.path
    let steps: [[String]] = [
      [
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", "\(d)/ca.key", "-out", "\(d)/ca.pem", "-days", "2", "-subj",
        "/CN=ingest test CA",
      ],
      [
        "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", "\(d)/server.key", "-out", "\(d)/server.csr", "-subj", "/CN=127.0.0.1",
      ],
      [
        "x509", "-req", "-in", "\(d)/server.csr", "-CA", "\(d)/ca.pem", "-CAkey", "\(d)/ca.key",
        "-CAcreateserial", "-out", "\(d)/server.pem", "-days", "2", "-extfile", "\(d)/san.ext",
      ],
    ]
    try "subjectAltName=IP:127.0.0.1,DNS:localhost\n".write(
      toFile: "\(d)/san.ext", atomically: true, encoding: .utf8)
    for step in steps {
      let result = try CommandRunner.run("openssl", step, timeout: 30)
      guard result.status == 0 else {
        throw LoopbackServers.Failure("openssl \(step[0]) failed: \(result.stderr)")
      }
    }
  }
}
