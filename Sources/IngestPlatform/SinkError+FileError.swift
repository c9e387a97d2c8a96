import IngestCore

extension SinkError {
  /// The one mapping of file errors to sink errors: a full device is `.diskFull`; any other
  /// failure is a write failure that writing the same path again will not fix.
  public init(file error: FileError) {
    if error.isDiskFull {
      self = .diskFull(path: error.path, reason: error.description)
    } else {
      self = .write(endpoint: error.path, reason: error.description, retryable: false)
    }
  }
}
