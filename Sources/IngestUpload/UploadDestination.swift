/// The base URL that every file is PUT under: `URL/NAME`.
///
/// Only `http` and `https`, without credentials (they would end up in logs and in the upload
/// journal; auth goes in headers), a query or a fragment (a name is appended to the path).
public struct UploadDestination: Equatable, Sendable, CustomStringConvertible {
  /// The base, always ending with `/`.
  public private(set) var base: String

  /// Parses and checks a base URL; a missing trailing `/` is added.
  public init(_ text: String) throws(UploadError) {
    let lower = text.lowercased()
    guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
      throw .invalidOption("--to must be an http:// or https:// URL")
    }
    let afterScheme = text[text.index(text.firstIndex(of: ":")!, offsetBy: 3)...]
    let authority = afterScheme.prefix(while: { $0 != "/" })
    guard !authority.isEmpty else { throw .invalidOption("--to has no host") }
    guard !authority.contains("@") else {
      throw .invalidOption("--to must not hold credentials; put them in --header-file")
    }
    guard !text.contains("?") && !text.contains("#") else {
      throw .invalidOption("--to must not have a query or fragment (a file name is appended)")
    }
    guard text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
      throw .invalidOption("--to must be printable ASCII without spaces")
    }
    try Self.checkPort(of: authority, in: text)
    base = text.hasSuffix("/") ? text : text + "/"
  }

  /// A port, when given, is 1 to 65535: libcurl would refuse any other only when the first
  /// request is made, after the upload journal was written, as a failure rather than a mistake.
  private static func checkPort(of authority: Substring, in text: String) throws(UploadError) {
    // After an IPv6 literal's `]`, or after the host's only colon.
    let afterHost: Substring
    if authority.hasPrefix("[") {
      guard let close = authority.firstIndex(of: "]") else {
        throw .invalidOption("--to \(text): the IPv6 address has no closing ']'")
      }
      afterHost = authority[authority.index(after: close)...]
    } else {
      afterHost = authority.firstIndex(of: ":").map { authority[$0...] } ?? ""
    }
    guard !afterHost.isEmpty else { return }
    let digits = afterHost.dropFirst()
    guard afterHost.first == ":", !digits.isEmpty, digits.count <= 5,
      digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
      let port = Int(digits), (1...65535).contains(port)
    else {
      throw .invalidOption(
        "--to \(text): '\(afterHost.dropFirst())' is not a port (1 to 65535); "
          + "type e.g. --to http://127.0.0.1:8080/rec/")
    }
  }

  /// The destination of a subdirectory's files: `URL/NAME/` (a rendition of a set).
  public func appending(directory name: String) -> UploadDestination {
    var destination = self
    destination.base = url(for: name) + "/"
    return destination
  }

  /// Whether the files go over TLS.
  public var isSecure: Bool { base.lowercased().hasPrefix("https://") }

  /// The URL of one file, its name percent-encoded outside the unreserved characters.
  public func url(for name: String) -> String {
    var encoded = ""
    for byte in name.utf8 {
      switch byte {
      case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
        UInt8(ascii: "_"), UInt8(ascii: "~"):
        encoded.unicodeScalars.append(Unicode.Scalar(byte))
      default:
        let digits = Array("0123456789ABCDEF".utf8)
        encoded += "%"
        encoded.unicodeScalars.append(Unicode.Scalar(digits[Int(byte >> 4)]))
        encoded.unicodeScalars.append(Unicode.Scalar(digits[Int(byte & 0xF)]))
      }
    }
    return base + encoded
  }

  public var description: String { base }
}
