/// Open GOPs: HEVC RASL pictures after a CRA.
///
/// A CRA picture (HEVC NAL type 21, the keyframe of an open GOP; x265's default) may be followed
/// in decoding order by random access skipped leading (RASL) pictures: shown before it, they
/// reference pictures of the GOP before it. A decoder that starts at the CRA knows to skip them;
/// one that has been decoding all along does not, so when the ring drops video of a GOP (or
/// video never arrived: the start of the stream, a wait for a keyframe), the RASL pictures of
/// the next GOP would be decoded against missing references. They go too, counted under the
/// reason of the drop that cost them their references.
///
/// RASL pictures of one GOP never reference those of the GOP before (a stream that starts at
/// that GOP's CRA, without them, must still decode), so dropping them costs the next GOP nothing.
/// H.264 samples and closed HEVC GOPs have no RASL pictures: none of this applies to them.
extension SendRing {
  /// Why `info`, a RASL picture arriving, must go; nil when it may be sent.
  func raslDropReason(_ info: UnitInfo) -> DropReason? {
    guard info.kind == .video, info.isRASL, !info.isKeyframe, let block = raslBlock,
      block.gop == newestGOP
    else { return nil }
    return block.reason
  }

  /// Video of `gop` that others may reference did not reach the output: the RASL pictures of the
  /// GOP after it go, those waiting now and those still to arrive.
  func referencesLost(inGOP gop: Int64, reason: DropReason) {
    let next = gop + 1
    blockRASL(ofGOP: next, reason: reason)
    // The scan is for the RASL pictures already waiting: without any, a drop costs no walk.
    guard next <= newestGOP, newestRASLGOP >= next else { return }
    for step in 0..<count {
      let index = (head + step) % recordCapacity
      let record = records[index]
      if record.state == .waiting && record.gop == next && record.info.isRASL {
        drop(index, reason)
      }
    }
  }

  /// RASL pictures of `gop` are dropped on arrival, as `reason`. A block of that GOP already in
  /// place keeps its reason (the drop that caused it came first); an older one gives way, as
  /// its RASL pictures are behind the video now arriving.
  func blockRASL(ofGOP gop: Int64, reason: DropReason) {
    if let block = raslBlock, block.gop >= gop { return }
    raslBlock = (gop, reason)
  }
}
