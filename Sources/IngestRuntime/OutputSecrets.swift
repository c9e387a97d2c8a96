import IngestPOSIX
import IngestRTMP
import IngestSRT
import IngestSinks
import IngestWHIP

#if canImport(Glibc)
  import Glibc
#endif

/// The outputs' secrets as a whole (`docs/secrets.md`): the environment variables that carry
/// them, in one list, and whether a run holds any, so that none reaches a child that needs none
/// (the live encoder) and a process holding one does not dump core.
public enum OutputSecrets {
  /// Every environment variable that carries an output's secret.
  public static let variables = [
    SRTOptions.passphraseVariable, SRTOptions.streamIDVariable, RTMPTarget.keyVariable,
    WHIPTarget.tokenVariable,
  ]

  /// Whether a run to `targets` may hold a secret: a secret variable is set, an RTMP output
  /// (its stream key), a WHIP output with a token file, or an SRT output with a passphrase or
  /// stream id (in the URL or a file). It errs towards yes: the answer only forbids core dumps.
  /// - Parameter environment: where the variables are looked up; nil is the process's.
  public static func present(in targets: [OutputTarget], environment: [String: String]? = nil)
    -> Bool
  {
    let variableSet = variables.contains { name in
      SecretSource.environment(name, in: environment) != nil
    }
    if variableSet { return true }
    return targets.contains { target in
      switch target {
      case .rtmp: true
      case .whip(let url): url.contains("token-file=")
      case .srt(let url): url.contains("passphrase") || url.contains("streamid")
      case .file, .null, .hls, .mp4: false
      }
    }
  }
}
