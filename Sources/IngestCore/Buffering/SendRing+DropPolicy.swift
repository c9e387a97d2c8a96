/// The drop policy: which units leave the ring, oldest first, when a bound would be crossed.
///
/// For space (bytes, arena, records), in this order:
///  1. the oldest disposable video frame (nothing references it);
///  2. the non-key frames of the oldest GOP not being sent, from its first waiting non-key frame to
///     its end, so a later frame of a GOP is never sent after an earlier one was dropped (a freeze,
///     never a smear); cutting the newest GOP makes video wait for the next keyframe;
///  3. the whole oldest GOP, keyframe included, while a newer keyframe waits;
///  4. the oldest mic audio, then the oldest app audio;
///  5. as for duration.
/// For duration, only the oldest units shorten the span: the oldest waiting unit goes; if it is
/// video, the rest of its GOP goes with it (and video waits for a keyframe if that was the newest).
/// Never a partial access unit: a unit is in the ring whole or not at all. HEVC RASL pictures
/// whose references went follow them (`SendRing+LeadingPictures.swift`).
extension SendRing {
  /// Drops by the space policy. Returns false when nothing can be dropped.
  func dropForSpace() -> Bool {
    if let index = firstWaiting(where: { $0.info.kind == .video && $0.info.isDisposable }) {
      drop(index, .disposable)
      trimHead()
      return true
    }
    let sendingGOP = count > 0 && records[head].state == .inFlight ? records[head].gop : -1
    if let index = firstWaiting(where: {
      $0.info.kind == .video && !$0.info.isKeyframe && $0.gop != sendingGOP
    }) {
      dropGOP(from: index, reason: .gopTail)
      return true
    }
    if waitingKeyframes >= 2,
      let index = firstWaiting(where: { $0.info.kind == .video && $0.info.isKeyframe })
    {
      dropGOP(from: index, reason: .oldestGOP)
      return true
    }
    for kind in [SampleKind.audioMic, .audioApp] {
      if let index = firstWaiting(where: { $0.info.kind == kind }) {
        drop(index, .audio)
        trimHead()
        return true
      }
    }
    return dropForDuration()
  }

  /// Drops the oldest waiting unit (with the rest of its GOP for video). False when none waits.
  func dropForDuration() -> Bool {
    guard let index = oldestWaitingIndex() else { return false }
    if records[index].info.kind == .video {
      dropGOP(from: index, reason: records[index].info.isKeyframe ? .oldestGOP : .gopTail)
    } else {
      drop(index, .audio)
      trimHead()
    }
    return true
  }

  /// Drops the waiting video of one GOP from `index` to the GOP's end.
  private func dropGOP(from index: Int, reason: DropReason) {
    let gop = records[index].gop
    var step = (index - head + recordCapacity) % recordCapacity
    while step < count {
      let current = (head + step) % recordCapacity
      let record = records[current]
      if record.info.kind == .video {
        if record.gop != gop { break }
        if record.state == .waiting { drop(current, reason) }
      }
      step += 1
    }
    if gop == newestGOP { startAwaitingKeyframe() }
    trimHead()
  }

  private func firstWaiting(where predicate: (Record) -> Bool) -> Int? {
    for step in 0..<count {
      let index = (head + step) % recordCapacity
      if records[index].state == .waiting && predicate(records[index]) { return index }
    }
    return nil
  }
}
