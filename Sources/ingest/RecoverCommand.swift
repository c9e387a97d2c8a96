import IngestCLI
import IngestCore
import IngestHLS
import IngestMP4

/// `ingest recover`: turns the directory of an interrupted HLS recording, or an interrupted
/// `.mp4`/`.mov` recording, into a finished one.
enum RecoverCommand: Command {
  static let name = "recover"
  static let summary = "finish an interrupted HLS or .mp4 recording"
  static let help = """
    usage: ingest recover DIR [--json]
           ingest recover REC.mp4|REC.mov [--json]

    Rebuilds DIR/index.m3u8 (or the playlist named in the journal) from DIR/journal after a
    crash or kill: every segment the journal records as complete is listed; the segment that was
    being written (segNNNNN.ts.part) is cut back to its last whole access unit and kept if it still
    holds a whole keyframe, otherwise removed; an fMP4 one (segNNNNN.m4s.part) is cut back to
    its last whole fragment and kept under the initialization section (EXT-X-MAP) it was written
    for; the playlist gets EXT-X-ENDLIST. A finished recording is left as it is. A recording with
    alternate audio (--audio both: video/, app/ and mic/ under DIR) is recovered a directory at a
    time. See docs/hls.md.

    A fragmented .mp4 or .mov recording killed while it was written is cut back to the end of
    its last whole fragment, so that it plays to there; a whole file is left as it is. Only a
    recording of ingest is touched (its ftyp lists the brand bcin and only its fragments
    follow the moov): any other file, and one a run is still writing, is refused (exit 1)
    and left unchanged. See docs/mp4.md.

    options:
      --json                    print what recovery found as JSON on standard output
      -h, --help                show this help

    exit status: 0 recovered or already finished, 1 no recording of ours, one being written,
    or a file error, 2 usage error
    """

  static func run(_ argv: [String]) throws -> Int32 {
    let args = try Arguments(argv, valued: [], flags: ["--json"])
    guard args.positionals.count == 1 else { throw UsageError("expected one DIR or .mp4 file") }
    let directory = args.positionals[0]
    let lower = directory.lowercased()
    if lower.hasSuffix(".mp4") || lower.hasSuffix(".mov") {
      return recoverMP4(directory, json: args.has("--json"))
    }
    // A recording with alternate audio (`--audio both`): each rendition's directory in turn.
    let renditions = HLSRendition.recorded(in: directory)
    if !renditions.isEmpty {
      var reports: [JSONObject] = []
      for rendition in renditions {
        let path = directory + "/" + rendition.directoryName
        let report: HLSRecoveryReport
        do { report = try HLSRecovery.recover(directory: path) } catch {
          return failed("\(rendition.directoryName): \(error)", json: args.has("--json"))
        }
        if args.has("--json") {
          var object = json(report)
          object.add("rendition", rendition.directoryName)
          reports.append(object)
        } else {
          Console.error("ingest recover: \(rendition.directoryName): " + report.description)
        }
      }
      if args.has("--json") {
        var object = JSONObject()
        object.add("renditions", reports)
        Console.out(object.rendered + "\n")
      }
      return 0
    }
    let report: HLSRecoveryReport
    do { report = try HLSRecovery.recover(directory: directory) } catch {
      return failed("\(error)", json: args.has("--json"))
    }
    if args.has("--json") {
      Console.out(json(report).rendered + "\n")
    } else {
      Console.error("ingest recover: " + report.description)
    }
    return 0
  }

  /// Says why recovery failed on standard error and, with `--json`, as `{"ok":false,...}` on
  /// standard output (a script reading it gets an answer either way); returns 1.
  static func failed(_ message: String, json: Bool) -> Int32 {
    Console.error("ingest recover: " + message)
    if json {
      var object = JSONObject()
      object.add("ok", false)
      object.add("error", message)
      Console.out(object.rendered + "\n")
    }
    return 1
  }

  /// What recovery found, as the `--json` object.
  static func json(_ report: HLSRecoveryReport) -> JSONObject {
    var object = JSONObject()
    object.add("playlist", report.playlistPath)
    object.add("was_finished", report.wasFinished)
    object.add("segments", report.segments)
    object.add(
      "partials",
      report.partials.map { partial in
        var item = JSONObject()
        switch partial {
        case .kept(let name, let fileBytes, let keptBytes, let duration):
          item.add("name", name)
          item.add("action", "kept")
          item.add("file_bytes", fileBytes)
          item.add("kept_bytes", keptBytes)
          item.add("duration_s", MediaTicks(duration).inSeconds)
        case .removed(let name, let fileBytes):
          item.add("name", name)
          item.add("action", "removed")
          item.add("file_bytes", fileBytes)
        }
        return item
      })
    object.add("renamed", report.renamed.count)
    object.add("lost", report.lost.count)
    object.add("journal_issues", report.journalIssues.count)
    return object
  }

  /// Cuts a killed `.mp4` recording to its last whole fragment.
  static func recoverMP4(_ path: String, json: Bool) -> Int32 {
    let report: MP4Recovery.Report
    do { report = try MP4Recovery.recover(path: path) } catch {
      return failed("\(error)", json: json)
    }
    if json {
      var object = JSONObject()
      object.add("file", report.path)
      object.add("file_bytes", report.fileBytes)
      object.add("kept_bytes", report.keptBytes)
      object.add("fragments", report.fragments)
      object.add("was_finished", !report.wasCut)
      Console.out(object.rendered + "\n")
    } else {
      Console.error("ingest recover: " + report.description)
    }
    return 0
  }
}
