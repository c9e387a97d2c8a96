import Foundation
import Testing

/// What a test does when this machine cannot run it (no root, no namespace, a missing tool): a
/// visible skip locally, and a recorded failure when the environment variable CI is set, where a
/// silent skip would hide that the test never ran.
enum TestEnvironment {
  static func unavailable(_ reason: String, sourceLocation: SourceLocation = #_sourceLocation) {
    if let ci = ProcessInfo.processInfo.environment["CI"], !ci.isEmpty {
      Issue.record("cannot run with CI set: \(reason)", sourceLocation: sourceLocation)
    } else {
      FileHandle.standardError.write(Data("skipped (\(sourceLocation)): \(reason)\n".utf8))
    }
  }
}
