/// Recognises a video sample written in Annex B form (ITU-T H.264 Annex B, H.265 Annex B):
/// NAL units behind `00 00 01` or `00 00 00 01` start codes instead of the length prefixes of
/// AVCC that the dump format and the pipeline take.
public enum AnnexBDetector {
  /// Whether `payload` opens with a start code followed by a NAL header whose
  /// forbidden_zero_bit is clear. Meant for a sample whose AVCC walk already failed: a valid
  /// AVCC sample can open with the same bytes (a 4-byte length of 1).
  /// - Complexity: O(1).
  public static func startsWithStartCode(_ payload: UnsafeRawBufferPointer) -> Bool {
    guard payload.count >= 4, payload[0] == 0, payload[1] == 0 else { return false }
    let header: Int
    if payload[2] == 1 {
      header = 3
    } else if payload[2] == 0, payload[3] == 1 {
      header = 4
    } else {
      return false
    }
    return payload.count > header && payload[header] & 0x80 == 0
  }
}
