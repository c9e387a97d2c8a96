/// The configuration of the video track: which codec, and its parameters.
public enum VideoFormat: Hashable, Sendable {
  /// H.264 with its avcC-derived parameters.
  case h264(H264Format)
  /// HEVC with its hvcC-derived parameters.
  case hevc(HEVCFormat)

  /// Size in bytes of each NAL length prefix in samples: 1, 2 or 4.
  public var nalLengthSize: Int {
    switch self {
    case .h264(let format): format.nalLengthSize
    case .hevc(let format): format.nalLengthSize
    }
  }

  /// The H.264 configuration, or nil for another codec.
  public var h264: H264Format? {
    if case .h264(let format) = self { format } else { nil }
  }

  /// The HEVC configuration, or nil for another codec.
  public var hevc: HEVCFormat? {
    if case .hevc(let format) = self { format } else { nil }
  }

  /// The same configuration as a track format.
  public var description: FormatDescription {
    switch self {
    case .h264(let format): .h264(format)
    case .hevc(let format): .hevc(format)
    }
  }

  /// Walks a sample of this format once: checks every NAL length and records what the pipeline
  /// and the TS packetizer need.
  /// - Throws: `FormatError.nalLengthPastEnd` naming the offset of the bad length prefix, or
  ///   `FormatError.annexBStartCodes` when the lengths do not fit because the sample is in
  ///   Annex B form (start codes) instead.
  public func summarize(_ payload: UnsafeRawBufferPointer) throws(FormatError) -> AVCCSummary {
    do {
      switch self {
      case .h264(let format):
        return try AVCCScanner.summarize(payload, lengthSize: format.nalLengthSize)
      case .hevc(let format):
        return try AVCCScanner.summarizeHEVC(
          payload, lengthSize: format.nalLengthSize, highestTemporalID: format.highestTemporalID)
      }
    } catch {
      // Only a walk that failed is diagnosed: valid AVCC whose first length happens to look
      // like a start code is never refused.
      if AnnexBDetector.startsWithStartCode(payload) {
        throw .annexBStartCodes(lengthSize: nalLengthSize)
      }
      throw error
    }
  }
}
