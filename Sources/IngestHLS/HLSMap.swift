/// An initialization section of an fMP4 recording (`ftyp` + `moov`): the file `EXT-X-MAP` names
/// before the segments that need it. A recording gets a new one at each run and each format
/// change (the device rotated).
public struct HLSMap: Equatable, Sendable {
  /// The file name inside the recording directory, e.g. `init00000.mp4`.
  public var name: String
  /// Size of the file in bytes.
  public var bytes: Int64

  public init(name: String, bytes: Int64) {
    self.name = name
    self.bytes = bytes
  }
}
