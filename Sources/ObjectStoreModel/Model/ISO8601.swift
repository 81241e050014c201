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
        let scalars = Array(text.unicodeScalars)
        var i = 0
        func number(_ digits: Int) -> Int? {
            guard i + digits <= scalars.count else { return nil }
            var value = 0
            for k in 0..<digits {
                let v = scalars[i + k].value
                guard (48...57).contains(v) else { return nil }
                value = value * 10 + Int(v - 48)
            }
            i += digits
            return value
        }
        func expect(_ c: Character) -> Bool {
            guard i < scalars.count, Character(scalars[i]) == c else { return false }
            i += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2) else { return nil }
        var hour = 0, minute = 0, second = 0
        var fraction: Double = 0
        var offsetSeconds = 0
        if i < scalars.count {
            guard expect("T") || expect(" ") || expect("t") else { return nil }
            guard let h = number(2), expect(":"), let m = number(2) else { return nil }
            hour = h
            minute = m
            if expect(":") {
                guard let s = number(2) else { return nil }
                second = s
                if expect(".") || expect(",") {
                    var digits = ""
                    while i < scalars.count, (48...57).contains(scalars[i].value) {
                        digits.append(Character(scalars[i]))
                        i += 1
                    }
                    guard !digits.isEmpty, let f = Double("0." + digits) else { return nil }
                    fraction = f
                }
            }
            if expect("Z") || expect("z") {
                // UTC
            } else if i < scalars.count {
                let sign: Int
                if expect("+") { sign = 1 } else if expect("-") { sign = -1 } else { return nil }
                guard let oh = number(2) else { return nil }
                _ = expect(":")
                guard let om = number(2) else { return nil }
                offsetSeconds = sign * (oh * 3600 + om * 60)
            }
        }
        guard i == scalars.count else { return nil }
        guard (1...12).contains(month), (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute),
            (0...60).contains(second)
        else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        guard let base = calendar.date(from: components),
            calendar.component(.day, from: base) == day
        else { return nil }
        return base.addingTimeInterval(fraction - Double(offsetSeconds))
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
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: Date(timeIntervalSince1970: wholeSeconds))
        func pad(_ v: Int?, _ width: Int) -> String {
            let s = String(v ?? 0)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        var text = "\(pad(c.year, 4))-\(pad(c.month, 2))-\(pad(c.day, 2))T\(pad(c.hour, 2)):\(pad(c.minute, 2)):\(pad(c.second, 2))"
        if micros != 0 {
            var digits = pad(micros, 6)
            while digits.hasSuffix("0") { digits.removeLast() }
            text += "." + digits
        }
        return text + "Z"
    }
}
