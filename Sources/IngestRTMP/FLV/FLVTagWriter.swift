/// Frames FLV tags around payloads that stay where they are: the bytes in front of a payload
/// (tag header and codec header) and after it (PreviousTagSize) go into two reused buffers, so
/// an access unit is written from the ring as it is and steady state allocates nothing.
struct FLVTagWriter {
  /// The tag header and the codec header of the tag framed last.
  private(set) var head: [UInt8] = []
  /// The PreviousTagSize of the tag framed last.
  private(set) var tail: [UInt8] = []

  init() {
    head.reserveCapacity(FLVTagHeader.size + 16)
    tail.reserveCapacity(4)
  }

  /// Frames a video tag whose codec data is `payloadSize` bytes.
  /// - Returns: false when the tag's body would not fit FLV's 24-bit size (nothing framed).
  mutating func frame(video header: FLVVideoTagHeader, payloadSize: Int, timestamp: UInt32)
    -> Bool
  {
    guard begin(.video, bodySize: header.size + payloadSize, timestamp: timestamp) else {
      return false
    }
    header.append(to: &head)
    return true
  }

  /// Frames an audio tag whose AAC data is `payloadSize` bytes.
  /// - Returns: false when the tag's body would not fit FLV's 24-bit size (nothing framed).
  mutating func frame(audio header: FLVAudioTagHeader, payloadSize: Int, timestamp: UInt32)
    -> Bool
  {
    guard begin(.audio, bodySize: header.size + payloadSize, timestamp: timestamp) else {
      return false
    }
    header.append(to: &head)
    return true
  }

  /// Frames a script tag whose body is `payloadSize` bytes.
  mutating func frame(scriptSize payloadSize: Int, timestamp: UInt32) -> Bool {
    begin(.script, bodySize: payloadSize, timestamp: timestamp)
  }

  private mutating func begin(_ type: FLVTagType, bodySize: Int, timestamp: UInt32) -> Bool {
    head.removeAll(keepingCapacity: true)
    tail.removeAll(keepingCapacity: true)
    guard bodySize <= FLVTagHeader.maximumBodySize else { return false }
    FLVTagHeader.append(type: type, bodySize: bodySize, timestamp: timestamp, to: &head)
    FLVTagHeader.appendTrailer(bodySize: bodySize, to: &tail)
    return true
  }

  /// The whole tag last framed around `payload`: for the small tags (configurations, metadata)
  /// and for tests.
  func tag(with payload: some Collection<UInt8>) -> [UInt8] {
    head + payload + tail
  }
}
