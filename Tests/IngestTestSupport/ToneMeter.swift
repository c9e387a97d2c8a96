#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The amplitude of one frequency in a run of PCM samples, by the Goertzel algorithm: one bin of
/// a DFT. Exact for a steady tone when the run holds a whole number of its cycles (a window of
/// one second, for whole-hertz tones), so no window function is needed.
package enum ToneMeter {
  /// The peak amplitude of the `frequency` component of `samples` (1.0: a full-scale sine).
  package static func amplitude<Samples: Collection<Float>>(
    of frequency: Double, in samples: Samples, sampleRate: Int
  ) -> Double {
    let omega = 2 * Double.pi * frequency / Double(sampleRate)
    let coefficient = 2 * cos(omega)
    var previous = 0.0
    var beforePrevious = 0.0
    for sample in samples {
      let current = Double(sample) + coefficient * previous - beforePrevious
      beforePrevious = previous
      previous = current
    }
    let real = previous - beforePrevious * cos(omega)
    let imaginary = beforePrevious * sin(omega)
    return 2 * (real * real + imaginary * imaginary).squareRoot() / Double(samples.count)
  }

  /// The phase, in cycles (-0.5..<0.5), of the `frequency` component of `samples` at their
  /// first sample: two runs of the same tone that start at the same time have the same phase,
  /// and a run shifted by `d` seconds is `frequency * d` cycles off.
  package static func phase<Samples: Collection<Float>>(
    of frequency: Double, in samples: Samples, sampleRate: Int
  ) -> Double {
    let omega = 2 * Double.pi * frequency / Double(sampleRate)
    var real = 0.0
    var imaginary = 0.0
    for (index, sample) in samples.enumerated() {
      real += Double(sample) * cos(omega * Double(index))
      imaginary -= Double(sample) * sin(omega * Double(index))
    }
    return atan2(imaginary, real) / (2 * Double.pi)
  }

  /// `amplitude` relative to `reference`, in decibels.
  package static func decibels(_ amplitude: Double, relativeTo reference: Double) -> Double {
    20 * log10(amplitude / reference)
  }
}
