import IngestCore

/// Where a new run's timestamps start when it continues a TS recording that already holds
/// segments.
///
/// A new run's timeline starts at the same time as every run's, so without this the segments
/// after the join would go back in time. The playlist marks the join with
/// `EXT-X-DISCONTINUITY`, which players at their defaults follow, but a reader that orders
/// packets by their timestamps across the join (ffmpeg's HLS demuxer, remuxing the recording)
/// sees a step back and, when audio and video end differently before it, frames that collide.
/// Starting the new run after the recording's end keeps every track's time going forward.
///
/// Reads only: the last segment the journal records as complete and any `.ts.part` file (a
/// segment recovery may keep); nothing is changed, and a file that cannot be read is skipped.
public enum HLSContinuation {
  /// Left between the recording's end and the new run's first sample: samples a little before
  /// the first one (audio that starts earlier than the video) still come after the end, and so
  /// does the last unit of a file, which the scan counts as whole only once something follows
  /// it (`HLSSegmentScanner`).
  public static let gap = MediaTicks.perSecond

  /// The timeline start (`Timeline.Configuration.startOffset`) that puts a new run after what
  /// `directory` holds, or nil when it holds no TS segment to continue.
  public static func timelineStart(directory: String) -> Int64? {
    guard let names = try? HLSFileSystem.entries(of: directory) else { return nil }
    var segments = names.filter {
      $0.hasSuffix(HLSContainer.transportStream.segmentExtension + ".part")
    }
    let journal = try? HLSFileSystem.readJournal(
      HLSFileSystem.join(directory, HLSJournal.fileName))
    if let last = journal?.segments.last,
      HLSContainer.of(segmentName: last.name) == .transportStream
    {
      segments.append(last.name)
    }
    let ends = segments.compactMap { name -> Int64? in
      let path = HLSFileSystem.join(directory, name)
      // A regular file only: opening a FIFO planted under a segment's name would block.
      guard HLSFileSystem.size(of: path) != nil else { return nil }
      return (try? HLSSegmentScanner.scan(path: path))?.endTime
    }
    return ends.max().map { $0 + gap }
  }
}
