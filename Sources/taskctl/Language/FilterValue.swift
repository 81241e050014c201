import Foundation

/// A date or duration written in a Taskwarrior filter, read as Taskwarrior 2.6 reads it.
/// Inside a filter a day is its first second (`due.before:friday` is before Friday
/// begins, `today` is the start of today); `eod`, `eow`, `eom`, `eoq` and `eoy` are the
/// last second of what they name; and a value may add or subtract durations:
/// `now+3d`, `eom-1w`, `tomorrow+2d`, `today+1` (a second).
struct FilterValue {
    let dates: DateParser

    /// Words that are a moment as they are, not a day to start.
    private static let moments: Set<String> = ["now", "eod", "eow", "eom", "eoq", "eoy", "sod", "sow", "som", "soq", "soy", "later", "someday"]

    func date(_ text: String) throws -> Date {
        var rest = Substring(text.trimmingBlanks())
        // The base runs to the first + or - that starts a duration (a date's own dashes,
        // as in 2026-12-01, are followed by digits and a dash or the end, never a unit).
        var base = rest
        var offsets: [(sign: Double, text: Substring)] = []
        if let split = Self.firstOffset(in: rest) {
            base = rest[..<split]
            rest = rest[split...]
            while let sign = rest.first, sign == "+" || sign == "-" {
                let body = rest.dropFirst()
                let end = body.firstIndex(where: { $0 == "+" || $0 == "-" }) ?? body.endIndex
                offsets.append((sign == "+" ? 1 : -1, body[..<end]))
                rest = body[end...]
            }
        }
        var date = try baseDate(String(base))
        for offset in offsets {
            guard let seconds = Self.seconds(offset.text) else {
                throw CLIError.usage("'\(text)': '\(offset.text)' is not a duration (3d, 2w, 1mo, 4h, 30min, P1D)")
            }
            date = date.addingTimeInterval(offset.sign * seconds)
        }
        return date
    }

    private func baseDate(_ text: String) throws -> Date {
        let lower = text.lowercased()
        if Self.moments.contains(lower) || lower.contains(":") || lower.contains("t") && lower.first?.isNumber == true {
            return try dates.parse(text)
        }
        // A duration alone is that long from now, as in Taskwarrior.
        if let seconds = Self.seconds(Substring(text)), text.first?.isNumber == true || text.uppercased().hasPrefix("P") {
            return dates.now.addingTimeInterval(seconds)
        }
        return try dates.parseStart(text)
    }

    /// Where the first `+DURATION` or `-DURATION` starts, if any.
    private static func firstOffset(in text: Substring) -> Substring.Index? {
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if (character == "+" || character == "-") && index != text.startIndex {
                let after = text[text.index(after: index)...]
                let end = after.firstIndex(where: { $0 == "+" || $0 == "-" }) ?? after.endIndex
                let candidate = after[..<end]
                // A date's dashes: 2026-12-01 (digits only between them) are not offsets.
                if seconds(candidate) != nil && !(candidate.allSatisfy(\.isNumber) && text[..<index].allSatisfy { $0.isNumber || $0 == "-" }) {
                    return index
                }
            }
            index = text.index(after: index)
        }
        return nil
    }

    /// A Taskwarrior duration in seconds: `3d`, `2w`, `1mo` (30 days), `1q` (91), `1y`
    /// (365), `4h`, `30min`, `10s`, a bare number of seconds, or ISO 8601 (`P1D`, `PT2H`).
    static func seconds(_ text: Substring) -> Double? {
        guard !text.isEmpty else { return nil }
        if text.uppercased().hasPrefix("P") { return iso(text.uppercased().dropFirst()) }
        let digits = text.prefix { $0.isNumber || $0 == "." }
        let unit = text.dropFirst(digits.count).lowercased()
        let count = digits.isEmpty ? 1 : Double(digits)
        guard let count else { return nil }
        let units: [String: Double] = [
            "": 1, "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
            "min": 60, "mins": 60, "minute": 60, "minutes": 60,
            "h": 3_600, "hr": 3_600, "hrs": 3_600, "hour": 3_600, "hours": 3_600,
            "d": 86_400, "day": 86_400, "days": 86_400,
            "w": 604_800, "wk": 604_800, "wks": 604_800, "week": 604_800, "weeks": 604_800,
            "m": 2_592_000, "mo": 2_592_000, "mos": 2_592_000, "mth": 2_592_000, "mths": 2_592_000, "month": 2_592_000, "months": 2_592_000,
            "q": 7_862_400, "qtr": 7_862_400, "qtrs": 7_862_400, "quarter": 7_862_400, "quarters": 7_862_400,
            "y": 31_536_000, "yr": 31_536_000, "yrs": 31_536_000, "year": 31_536_000, "years": 31_536_000,
        ]
        if digits.isEmpty && unit.isEmpty { return nil }
        guard let size = units[unit] else { return nil }
        return count * size
    }

    /// `P1Y2M3W4DT5H6M7S` (after the P), with Taskwarrior's fixed lengths.
    private static func iso(_ text: Substring) -> Double? {
        var total = 0.0, number = "", inTime = false, any = false
        for character in text {
            if character == "T" { inTime = true; continue }
            if character.isNumber || character == "." { number.append(character); continue }
            guard let value = Double(number) else { return nil }
            number = ""
            any = true
            switch (character, inTime) {
            case ("Y", false): total += value * 31_536_000
            case ("M", false): total += value * 2_592_000
            case ("W", false): total += value * 604_800
            case ("D", false): total += value * 86_400
            case ("H", true): total += value * 3_600
            case ("M", true): total += value * 60
            case ("S", true): total += value
            default: return nil
            }
        }
        return any && number.isEmpty ? total : nil
    }
}
