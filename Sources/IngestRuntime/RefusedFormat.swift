import IngestCore

/// A format record the reader refused: its track has no configuration the writer can carry, so
/// its samples are dropped. Reported on standard error, in `--json` and as a status event.
public struct RefusedFormat: Sendable, Equatable {
  /// The track the record was for.
  public var kind: SampleKind
  /// Why, and where (the record's byte offset is in the error).
  public var error: DumpError

  public init(kind: SampleKind, error: DumpError) {
    self.kind = kind
    self.error = error
  }

  /// The record's byte offset in the dump, when the error names one.
  public var offset: Int64? {
    switch error {
    case .unknownCodec(let offset, _), .malformedRecord(let offset, _, _), .format(let offset, _):
      offset
    default: nil
    }
  }

  /// Why the record was refused, without the offset.
  public var reason: String {
    switch error {
    case .format(_, let format): format.description
    case .malformedRecord(_, _, let reason): reason
    case .unknownCodec(_, let codec): "unknown codec \(codec)"
    default: error.description
    }
  }

  /// The fields of the `formatRefused` status event and of a `--json` entry.
  public var json: JSONObject {
    var object = JSONObject()
    object.add("kind", kind.description)
    if let offset { object.add("offset", offset) }
    object.add("reason", reason)
    return object
  }
}
