/// The bytes that open an audio tag's body, before the AAC data: a legacy AAC header for the
/// stream's first (default) audio track, an E-RTMP v2 multitrack header for another track.
///
/// Legacy AAC (FLV 10.1, E.4.2.1), 2 bytes:
/// ```
/// UB[4] SoundFormat 10 | UB[2] SoundRate 3 | UB[1] SoundSize 1 | UB[1] SoundType 1  (0xAF:
///       AAC's rate and channels are in its AudioSpecificConfig; FLV says to set these so)
/// UI8   AACPacketType: 0 sequence header (AudioSpecificConfig follows), 1 raw frame
/// ```
/// E-RTMP v2 multitrack, one track in the message (Enhanced RTMP, "Enhanced Audio"), 7 bytes:
/// ```
/// UB[4] SoundFormat 9 (ExHeader) | UB[4] AudioPacketType 5 (Multitrack)
/// UB[4] AvMultitrackType 0 (OneTrack) | UB[4] AudioPacketType (0 SequenceStart, 1 CodedFrames)
/// FOURCC AudioFourCc 'mp4a'
/// UI8   AudioTrackId
/// ```
/// OneTrack needs no size per track: the rest of the message is the track's.
struct FLVAudioTagHeader: Equatable, Sendable {
  /// What the tag carries.
  enum Packet: Equatable, Sendable {
    /// The AudioSpecificConfig.
    case sequenceStart
    /// One raw AAC frame.
    case codedFrames
  }

  var packet: Packet
  /// Nil: a legacy AAC tag, the track players without E-RTMP play (track 0 to a reader of
  /// multitrack). A number: an E-RTMP multitrack tag for that track.
  var trackID: UInt8?

  /// The header's size in bytes.
  var size: Int { trackID == nil ? 2 : 7 }

  /// Appends the header's bytes.
  func append(to bytes: inout [UInt8]) {
    let packetType: UInt8 = packet == .sequenceStart ? 0 : 1
    guard let trackID else {
      bytes.append(0xAF)
      bytes.append(packetType)
      return
    }
    bytes.append(9 << 4 | 5)
    bytes.append(0 << 4 | packetType)
    bytes.appendBigEndian(UInt64(FLVFourCC.aac.value), count: 4)
    bytes.append(trackID)
  }
}
