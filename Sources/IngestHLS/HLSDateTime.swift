import IngestCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `EXT-X-PROGRAM-DATE-TIME` values: ISO 8601 UTC with milliseconds, `2026-03-01T12:34:56.789Z`,
/// from and to milliseconds since 1970-01-01, with the proleptic Gregorian calendar in integers.
public enum HLSDateTime {
  /// The wall clock (`CLOCK_REALTIME`) in milliseconds since 1970-01-01 UTC.
  public static func now() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / TimeSpan.nanosecondsPerMillisecond
  }

  /// Formats milliseconds since the epoch.
  public static func format(_ milliseconds: Int64) -> String {
    let days = floorDivide(milliseconds, 86_400_000)
    let inDay = milliseconds - days * 86_400_000
    let (year, month, day) = civil(fromDays: days)
    return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T" + pad(inDay / 3_600_000, 2)
      + ":" + pad(inDay / 60_000 % 60, 2) + ":" + pad(inDay / 1000 % 60, 2) + "."
      + pad(inDay % 1000, 3) + "Z"
  }

  /// Parses exactly the form `format` writes; nil for anything else.
  public static func parse(_ text: Substring) -> Int64? {
    let bytes = Array(text.utf8)
    guard bytes.count == 24, bytes[4] == 0x2D, bytes[7] == 0x2D, bytes[10] == 0x54,
      bytes[13] == 0x3A, bytes[16] == 0x3A, bytes[19] == 0x2E, bytes[23] == 0x5A
    else { return nil }
    func number(_ range: Range<Int>) -> Int64? {
      var value: Int64 = 0
      for index in range {
        let digit = bytes[index]
        guard digit >= 0x30, digit <= 0x39 else { return nil }
        value = value * 10 + Int64(digit - 0x30)
      }
      return value
    }
    guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
      let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
      let millisecond = number(20..<23), (1...12).contains(month), (1...31).contains(day),
      hour < 24, minute < 60, second < 60
    else { return nil }
    let days = daysFromCivil(year: year, month: month, day: day)
    return ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millisecond
  }

  private static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
    a >= 0 ? a / b : -((-a + b - 1) / b)
  }

  private static func pad(_ value: Int64, _ width: Int) -> String {
    let text = String(value)
    return String(repeating: "0", count: max(0, width - text.count)) + text
  }

  /// Year, month, day of a day count since 1970-01-01 (H. Hinnant's civil_from_days).
  static func civil(fromDays count: Int64) -> (Int64, Int64, Int64) {
    let z = count + 719_468
    let era = floorDivide(z, 146_097)
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let mp = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * mp + 2) / 5 + 1
    let month = mp < 10 ? mp + 3 : mp - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
  }

  /// Day count since 1970-01-01 of a civil date (H. Hinnant's days_from_civil).
  static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
    let y = month <= 2 ? year - 1 : year
    let era = floorDivide(y, 400)
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }
}
