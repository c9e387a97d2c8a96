/// The NAL units of Annex B bytes (MPEG-TS, raw .h264/.hevc), for the H.264 and HEVC converters.
enum AnnexBUnits {
  /// Splits Annex B bytes at 3- and 4-byte start codes; empty units are dropped.
  static func split(_ data: [UInt8]) -> [[UInt8]] {
    var units: [[UInt8]] = []
    var start: Int? = nil
    var index = 0
    func close(at end: Int) {
      guard let begin = start else { return }
      var stop = end
      // Zero bytes before a start code belong to it (4-byte form); at the end they are
      // trailing_zero_8bits. A NAL unit itself never ends in 0x00.
      while stop > begin, data[stop - 1] == 0 { stop -= 1 }
      if stop > begin { units.append(Array(data[begin..<stop])) }
    }
    while index + 2 < data.count {
      if data[index] == 0, data[index + 1] == 0, data[index + 2] == 1 {
        close(at: index)
        index += 3
        start = index
      } else {
        index += 1
      }
    }
    close(at: data.count)
    return units
  }
}
