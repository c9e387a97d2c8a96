import Foundation
import IngestTestSupport

/// The tags of an FLV file, as far as sequence headers go.
struct FLVTags {
  struct Tag {
    var type: UInt8
    var timestamp: UInt32
    var body: ArraySlice<UInt8>
  }

  var tags: [Tag] = []

  init(path: String) throws {
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    guard bytes.count >= 13, bytes.starts(with: Array("FLV".utf8)) else {
      throw LoopbackServers.Failure("\(path) is not an FLV file")
    }
    var offset =
      Int(UInt32(bytes[5]) << 24 | UInt32(bytes[6]) << 16 | UInt32(bytes[7]) << 8)
      + Int(bytes[8]) + 4
    while offset + 11 <= bytes.count {
      let size = Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
      let timestamp =
        UInt32(bytes[offset + 7]) << 24 | UInt32(bytes[offset + 4]) << 16
        | UInt32(bytes[offset + 5]) << 8 | UInt32(bytes[offset + 6])
      guard offset + 11 + size <= bytes.count else { break }
      tags.append(
        Tag(
          type: bytes[offset], timestamp: timestamp,
          body: bytes[(offset + 11)..<(offset + 11 + size)]))
      offset += 11 + size + 4
    }
  }

  /// The headers that differ from the one before them.
  static func changes(in headers: [Tag]) -> [Tag] {
    headers.reduce(into: []) { kept, tag in if kept.last?.body != tag.body { kept.append(tag) } }
  }

  /// Video tags with codec 7 (AVC) and AVCPacketType 0.
  var avcSequenceHeaders: [Tag] {
    tags.filter {
      $0.type == 9 && $0.body.count >= 2 && $0.body.first! & 0x0F == 7
        && $0.body.dropFirst().first == 0
    }
  }

  /// Audio tags with sound format 10 (AAC) and AACPacketType 0.
  var aacSequenceHeaders: [Tag] {
    tags.filter {
      $0.type == 8 && $0.body.count >= 2 && $0.body.first! >> 4 == 10
        && $0.body.dropFirst().first == 0
    }
  }
}
