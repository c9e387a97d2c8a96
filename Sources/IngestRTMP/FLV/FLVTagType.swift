/// The type of an FLV tag, which RTMP also uses as its message type.
enum FLVTagType: UInt8, Sendable {
  /// AUDIODATA (RTMP message type 8).
  case audio = 8
  /// VIDEODATA (RTMP message type 9).
  case video = 9
  /// SCRIPTDATA: `onMetaData` (RTMP data message, type 18).
  case script = 18
}
