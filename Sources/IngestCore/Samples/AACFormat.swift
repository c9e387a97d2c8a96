/// AAC stream configuration parsed from an AudioSpecificConfig (ISO/IEC 14496-3, 1.6.2.1).
///
/// ```
/// 5 bits audioObjectType [| 6 bits audioObjectTypeExt if 31: the type is 32 + it]
/// 4 bits samplingFrequencyIndex [| 24 bits explicit rate if index 15]
/// 4 bits channelConfiguration | ...
/// ```
///
/// Only object types 1 to 4 are carried (ADTS's 2-bit profile holds no other, and every output
/// times AAC in 1024-sample frames); any other is refused by its name (`objectTypeName`).
public struct AACFormat: Hashable, Sendable {
  /// The sampling rates addressable by a 4-bit index, in index order.
  public static let sampleRates: [Int] = [
    96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350,
  ]

  /// Audio object type (2 = AAC-LC).
  public var objectType: Int
  /// Index into `sampleRates`.
  public var sampleRateIndex: Int
  /// Channel configuration (1 mono, 2 stereo, ... 7).
  public var channels: Int

  /// Samples per second.
  public var sampleRate: Int { Self.sampleRates[sampleRateIndex] }

  /// Creates a configuration; only what ADTS can carry is accepted.
  public init(objectType: Int, sampleRate: Int, channels: Int) throws(FormatError) {
    guard (1...4).contains(objectType) else { throw .aacObjectType(objectType) }
    guard let index = Self.sampleRates.firstIndex(of: sampleRate) else {
      throw .aacSampleRate(sampleRate)
    }
    guard (1...7).contains(channels) else { throw .aacChannelConfiguration(channels) }
    self.objectType = objectType
    self.sampleRateIndex = index
    self.channels = channels
  }

  /// Parses an AudioSpecificConfig. An object type that cannot be carried is refused as soon
  /// as it is read (its escape included), before fields whose layout depends on it.
  public init(audioSpecificConfig bytes: some Collection<UInt8>) throws(FormatError) {
    var reader = BitReader(Array(bytes))
    guard bytes.count >= 2, var objectType = reader.read(5) else {
      throw .audioSpecificConfigTruncated
    }
    // The escape comes right after the 5 bits, before the sampling frequency (1.6.2.1).
    if objectType == 31 {
      guard let extended = reader.read(6) else { throw .audioSpecificConfigTruncated }
      objectType = 32 + extended
    }
    guard (1...4).contains(objectType) else { throw .aacObjectType(objectType) }
    guard let frequencyIndex = reader.read(4) else { throw .audioSpecificConfigTruncated }
    var rate: Int
    if frequencyIndex == 15 {
      guard let explicit = reader.read(24) else { throw .audioSpecificConfigTruncated }
      rate = explicit
    } else if frequencyIndex < Self.sampleRates.count {
      rate = Self.sampleRates[frequencyIndex]
    } else {
      throw .aacSampleRate(frequencyIndex)
    }
    guard let channels = reader.read(4) else { throw .audioSpecificConfigTruncated }
    if rate == 0 { rate = -1 }
    try self.init(objectType: objectType, sampleRate: rate, channels: channels)
  }

  /// The name of an audio object type (ISO/IEC 14496-3, 1.5.1.1), for messages.
  public static func objectTypeName(_ objectType: Int) -> String {
    switch objectType {
    case 1: "AAC Main"
    case 2: "AAC-LC"
    case 3: "AAC SSR"
    case 4: "AAC LTP"
    case 5: "HE-AAC (SBR)"
    case 6: "AAC Scalable"
    case 17: "ER AAC-LC"
    case 19: "ER AAC LTP"
    case 20: "ER AAC Scalable"
    case 23: "AAC-LD"
    case 29: "HE-AAC v2 (PS)"
    case 39: "AAC-ELD"
    case 42: "USAC (xHE-AAC)"
    default: "audio object type \(objectType)"
    }
  }

  /// The two-byte AudioSpecificConfig for this configuration.
  public var audioSpecificConfig: [UInt8] {
    let bits = objectType << 11 | sampleRateIndex << 7 | channels << 3
    return [UInt8(bits >> 8), UInt8(bits & 0xFF)]
  }

  /// Duration of one AAC frame (1024 samples) in 90 kHz ticks, rounded down.
  public var frameTicks90k: Int64 { 1024 * MediaTicks.perSecond / Int64(sampleRate) }
}
