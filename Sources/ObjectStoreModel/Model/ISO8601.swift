import Foundation

/// ISO-8601 date text as schema files and JSON stores write it.
///
/// Parsing accepts `2026-12-01`, `2026-12-01T14:30:00Z`, fractional seconds and numeric
/// offsets (`+02:00`); a date without a zone is UTC. Formatting writes UTC with as many
/// fractional digits as the value needs (up to microseconds), so dates round-trip exactly to
/// the microsecond.
package enum ISO8601 {
    /// The dates a store keeps: years 0001 to 9999 (UTC), the years ISO-8601 text writes in
    /// four digits. A save of a date outside fails validation, so no store ever holds a date
    /// its reader would refuse.
    public static let supportedDates = Date(timeIntervalSince1970: -62_135_596_800)..<Date(timeIntervalSince1970: 253_402_300_800)

    /// Parses ISO-8601 text, or returns `nil`.
    public static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { parse(bytes: $0) }
    }

    /// Parses ISO-8601 text given as UTF-8 bytes, or returns `nil`.
    package static func parse(bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var i = 0
        func number(_ digits: Int) -> Int? {
            guard i + digits <= bytes.count else { return nil }
            var value = 0
            for k in 0..<digits {
                let v = bytes[i + k]
                guard (48...57).contains(v) else { return nil }
                value = value * 10 + Int(v - 48)
            }
            i += digits
            return value
        }
        func expect(_ c: Unicode.Scalar) -> Bool {
            guard i < bytes.count, UInt32(bytes[i]) == c.value else { return false }
            i += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2) else { return nil }
        var hour = 0, minute = 0, second = 0
        var fraction: Double = 0
        var offsetSeconds = 0
        if i < bytes.count {
            guard expect("T") || expect(" ") || expect("t") else { return nil }
            guard let h = number(2), expect(":"), let m = number(2) else { return nil }
            hour = h
            minute = m
            if expect(":") {
                guard let s = number(2) else { return nil }
                second = s
                if expect(".") || expect(",") {
                    let start = i
                    while i < bytes.count, (48...57).contains(bytes[i]) { i += 1 }
                    guard i > start, let f = Double("0." + String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)) else { return nil }
                    fraction = f
                }
            }
            if expect("Z") || expect("z") {
                // UTC
            } else if i < bytes.count {
                let sign: Int
                if expect("+") { sign = 1 } else if expect("-") { sign = -1 } else { return nil }
                guard let oh = number(2) else { return nil }
                _ = expect(":")
                // Offsets run from -18:00 to +18:00 (as Foundation's time zones and RFC 3339
                // readers take them); +99:00 is a typo, not a zone.
                guard let om = number(2), om < 60, oh * 60 + om <= 18 * 60 else { return nil }
                offsetSeconds = sign * (oh * 3600 + om * 60)
            }
        }
        guard i == bytes.count else { return nil }
        guard let base = date(year: year, month: month, day: day, hour: hour, minute: minute, second: second) else { return nil }
        return base.addingTimeInterval(fraction - Double(offsetSeconds))
    }

    /// The UTC date of calendar fields (seconds may be 60, a leap second, which counts as the
    /// next minute's first), or `nil` for a day the month does not have or a field out of range.
    package static func date(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Date? {
        guard (1...12).contains(month), (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute),
            (0...60).contains(second)
        else { return nil }
        // The proleptic Gregorian calendar for every year, as ISO 8601 counts (Foundation's
        // Gregorian calendar counts Julian days before October 1582, and had no 1582-10-05
        // to 1582-10-14).
        guard (1...9999).contains(year), day <= daysIn(month: month, year: year) else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: Double(days * 86_400 + hour * 3_600 + minute * 60 + second))
    }

    /// Formats a date as ISO-8601 UTC text (`2026-12-01T14:30:00Z`, with fractional seconds when
    /// the date has them).
    public static func format(_ date: Date) -> String {
        let interval = date.timeIntervalSince1970
        guard interval.isFinite, abs(interval) < 253_402_300_800 else { return String(interval) }
        var wholeSeconds = interval.rounded(.down)
        var micros = Int(((interval - wholeSeconds) * 1_000_000).rounded())
        if micros >= 1_000_000 {
            micros -= 1_000_000
            wholeSeconds += 1
        }
        let (year, month, day, hour, minute, second) = fields(ofWholeSeconds: Int(wholeSeconds))
        // At most "YYYY-MM-DDTHH:MM:SS.ffffffZ", 27 bytes, written in place.
        return String(unsafeUninitializedCapacity: 27) { out in
            var at = 0
            func append(_ value: Int, _ width: Int) {
                var rest = value
                for k in stride(from: width - 1, through: 0, by: -1) {
                    out[at + k] = UInt8(48 + rest % 10)
                    rest /= 10
                }
                at += width
            }
            func append(_ byte: UInt8) {
                out[at] = byte
                at += 1
            }
            append(year, 4)
            append(0x2D)  // -
            append(month, 2)
            append(0x2D)
            append(day, 2)
            append(0x54)  // T
            append(hour, 2)
            append(0x3A)  // :
            append(minute, 2)
            append(0x3A)
            append(second, 2)
            if micros != 0 {
                var digits = micros, width = 6
                while digits % 10 == 0 {
                    digits /= 10
                    width -= 1
                }
                append(0x2E)  // .
                append(digits, width)
            }
            append(0x5A)  // Z
            return at
        }
    }

    /// The UTC calendar fields of whole seconds since 1970.
    package static func fields(ofWholeSeconds seconds: Int) -> (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let inDay = seconds - days * 86_400
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        return (year, month, day, inDay / 3_600, inDay % 3_600 / 60, inDay % 60)
    }

    /// Years from this one on are counted the same by Foundation's Gregorian calendar and
    /// the proleptic one (Foundation's counts Julian days before October 1582).
    package static let reformYear = 1583
    /// 1583-01-01T00:00:00Z in seconds since 1970.
    package static let reformStart = daysSinceEpoch(year: reformYear, month: 1, day: 1) * 86_400

    static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 to a date of the Gregorian calendar, counting years that start in
    /// March (so the leap day is the last of its year) in 400-year cycles of 146,097 days.
    package static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let marchYear = month <= 2 ? year - 1 : year
        let cycle = (marchYear >= 0 ? marchYear : marchYear - 399) / 400
        let yearOfCycle = marchYear - cycle * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfCycle = yearOfCycle * 365 + yearOfCycle / 4 - yearOfCycle / 100 + dayOfYear
        return cycle * 146_097 + dayOfCycle - 719_468
    }

    /// The Gregorian date `days` after 1970-01-01 (the inverse of ``daysSinceEpoch(year:month:day:)``).
    package static func civilDate(daysSinceEpoch days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let cycle = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfCycle = shifted - cycle * 146_097
        let yearOfCycle = (dayOfCycle - dayOfCycle / 1_460 + dayOfCycle / 36_524 - dayOfCycle / 146_096) / 365
        let dayOfYear = dayOfCycle - (365 * yearOfCycle + yearOfCycle / 4 - yearOfCycle / 100)
        let marchMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * marchMonth + 2) / 5 + 1
        let month = marchMonth < 10 ? marchMonth + 3 : marchMonth - 9
        return (yearOfCycle + cycle * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
