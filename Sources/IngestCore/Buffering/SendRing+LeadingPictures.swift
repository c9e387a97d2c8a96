/// Open GOPs: leading pictures that may reference the GOP before their keyframe.
///
/// The keyframe of an open GOP may be followed in decoding order by leading pictures: shown
/// before it, they reference pictures of the GOP before it. HEVC marks them: RASL pictures
/// (random access skipped leading, NAL types 8 and 9) after a CRA or BLA picture (x265's
/// default). H.264 does not: after a keyframe that is an I picture but no IDR (a recovery
/// point, x264's `--open-gop` and many hardware encoders), every picture before it in output
/// order is leading (`UnitInfo.isLeading`, decided by the pipeline from the timestamps).
///
/// When the ring drops video of a GOP (or video never arrived: the start of the stream, a wait
/// for a keyframe), the leading pictures of the next GOP would be decoded against missing
/// references. They go too, counted under the reason of the drop that cost them their
/// references. Leading pictures of one GOP are referenced by no picture that is not leading (a
/// stream that starts at that GOP's keyframe, without them, must still decode), so dropping
/// them costs the next GOP nothing. IDR-started GOPs have no leading pictures of this kind.
extension SendRing {
  /// Why `info`, a leading picture arriving, must go; nil when it may be sent.
  func leadingDropReason(_ info: UnitInfo) -> DropReason? {
    guard info.kind == .video, info.isLeading, !info.isKeyframe, let block = leadingBlock,
      block.gop == newestGOP
    else { return nil }
    return block.reason
  }

  /// Video of `gop` that others may reference did not reach the output: the leading pictures of the
  /// GOP after it go, those waiting now and those still to arrive.
  func referencesLost(inGOP gop: Int64, reason: DropReason) {
    let next = gop + 1
    blockLeading(ofGOP: next, reason: reason)
    // The scan is for the leading pictures already waiting: without any, a drop costs no walk.
    guard next <= newestGOP, newestLeadingGOP >= next else { return }
    for step in 0..<count {
      let index = (head + step) % recordCapacity
      let record = records[index]
      if record.state == .waiting && record.gop == next && record.info.isLeading {
        drop(index, reason)
      }
    }
  }

  /// Leading pictures of `gop` are dropped on arrival, as `reason`. A block of that GOP already in
  /// place keeps its reason (the drop that caused it came first); an older one gives way, as
  /// its leading pictures are behind the video now arriving.
  func blockLeading(ofGOP gop: Int64, reason: DropReason) {
    if let block = leadingBlock, block.gop >= gop { return }
    leadingBlock = (gop, reason)
  }
}
