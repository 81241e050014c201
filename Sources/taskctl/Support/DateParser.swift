import Foundation
import ObjectStoreModel

/// Dates as people type them (docs/taskctl.md, "Dates"). A date without a time means the
/// end of that day (23:59:59) in the time zone from `TZ`.
struct DateParser {
    let now: Date
    let calendar: Calendar
    /// Taskwarrior's `dateformat` (`D.M.Y`): dates typed that way are read too, as there.
    var format: String?

    init(now: Date, timeZone: TimeZone, format: String? = nil) {
        self.now = now
        self.calendar = .taskctl(in: timeZone)
        self.format = format
    }

    static let accepted = "2026-12-01, 2026-12-01T14:30, 20261201T143000Z, today, tomorrow, yesterday, now, monday..sunday, 15th, eod, eow, eom, eoq, eoy, sod, sow, som, soq, soy, later, 3d, +2w, -1d, 1m, 1y, 4h, P3D, PT2H"

    func parse(_ input: String) throws -> Date {
        let text = input.trimmingBlanks().lowercased()
        if let date = parseKeyword(text) ?? parseRelative(text) ?? parseOrdinal(text) ?? parseDuration(input.trimmingBlanks())
            ?? parseAbsolute(input.trimmingBlanks()) ?? format.flatMap({ parseFormatted(input.trimmingBlanks(), $0) })
        {
            return date
        }
        throw CLIError.usage("bad date '\(input)'; use one of: \(Self.accepted)")
    }

    /// A date written in Taskwarrior's `dateformat` letters (Y 2026, y 26, M 03, m 3, D 07,
    /// d 7, b Mar, a Sat; other characters as written): the end of that day.
    func parseFormatted(_ text: String, _ format: String) -> Date? {
        let characters = Array(text)
        var index = 0
        var year: Int?, month: Int?, day: Int?
        func digits(_ least: Int, _ most: Int) -> Int? {
            var value = 0, count = 0
            while count < most, index < characters.count, let digit = characters[index].wholeNumberValue, characters[index].isASCII {
                value = value * 10 + digit
                index += 1
                count += 1
            }
            return count >= least ? value : nil
        }
        func name(_ names: [String]) -> Int? {
            guard index + 3 <= characters.count else { return nil }
            let word = String(characters[index..<index + 3]).lowercased()
            guard let found = names.firstIndex(of: word) else { return nil }
            index += 3
            return found
        }
        for letter in format {
            switch letter {
            case "Y": guard let value = digits(4, 4) else { return nil }; year = value
            case "y": guard let value = digits(2, 2) else { return nil }; year = 2000 + value
            case "M": guard let value = digits(2, 2) else { return nil }; month = value
            case "m": guard let value = digits(1, 2) else { return nil }; month = value
            case "D": guard let value = digits(2, 2) else { return nil }; day = value
            case "d": guard let value = digits(1, 2) else { return nil }; day = value
            case "b":
                guard let value = name(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]) else { return nil }
                month = value + 1
            case "a": guard name(["sun", "mon", "tue", "wed", "thu", "fri", "sat"]) != nil else { return nil }
            default:
                guard index < characters.count, characters[index] == letter else { return nil }
                index += 1
            }
        }
        guard index == characters.count, let year, let month, let day,
              let date = calendar.isoDate(year: year, month: month, day: day, hour: 0, minute: 0, second: 0) else { return nil }
        return endOfDay(date)
    }

    /// A date that starts something (wait, scheduled): a day without a time means the start
    /// of that day, not its end.
    func parseStart(_ input: String) throws -> Date {
        let date = try parse(input)
        return date == endOfDay(date) ? calendar.startOfDay(for: date) : date
    }

    /// The last second of the date's day: a second before the next day starts. (Adding a day
    /// to the start of a day where the clocks skip midnight lands at 01:00 the next day.)
    func endOfDay(_ date: Date) -> Date {
        guard let next = calendar.date(byAdding: .day, value: 1, to: calendar.startOfDay(for: date)) else { return date }
        return calendar.startOfDay(for: next).addingTimeInterval(-1)
    }

    private func parseKeyword(_ text: String) -> Date? {
        switch text {
        case "now": return now
        case "today", "eod": return endOfDay(now)
        case "tomorrow": return calendar.date(byAdding: .day, value: 1, to: now).map(endOfDay)
        case "yesterday": return calendar.date(byAdding: .day, value: -1, to: now).map(endOfDay)
        case "eow":
            // The coming Sunday (today, when today is Sunday).
            let weekday = calendar.component(.weekday, from: now)  // 1 = Sunday
            let ahead = (8 - weekday) % 7
            return calendar.date(byAdding: .day, value: ahead, to: now).map(endOfDay)
        case "eom":
            guard let range = calendar.range(of: .day, in: .month, for: now) else { return nil }
            let day = calendar.component(.day, from: now)
            return calendar.date(byAdding: .day, value: range.count - day, to: now).map(endOfDay)
        case "eoy":
            let year = calendar.component(.year, from: now)
            return calendar.date(from: DateComponents(year: year, month: 12, day: 31)).map(endOfDay)
        case "eoq":
            // The last day of the quarter: the day before the next quarter starts.
            return startOfQuarter(after: 1).map { endOfDay($0.addingTimeInterval(-1)) }
        // The start words mean the first second of what they name, as in Taskwarrior.
        case "sod": return calendar.startOfDay(for: now)
        case "sow": return calendar.dateInterval(of: .weekOfYear, for: now)?.start
        case "som": return calendar.dateInterval(of: .month, for: now)?.start
        case "soq": return startOfQuarter(after: 0)
        case "soy": return calendar.dateInterval(of: .year, for: now)?.start
        case "later", "someday":
            // Taskwarrior's "a date that never comes": 9999-12-30 at midnight, local.
            return calendar.isoDate(year: 9999, month: 12, day: 30, hour: 0, minute: 0, second: 0)
        default:
            break
        }
        let weekdays = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]
        if text.count >= 3, let index = weekdays.firstIndex(where: { $0.hasPrefix(text) && (text.count >= 3) }) {
            let today = calendar.component(.weekday, from: now) - 1
            var ahead = (index - today + 7) % 7
            if ahead == 0 { ahead = 7 }  // the next one, not today
            return calendar.date(byAdding: .day, value: ahead, to: now).map(endOfDay)
        }
        return nil
    }

    private func parseRelative(_ text: String) -> Date? {
        var body = Substring(text)
        var sign = 1
        if body.hasPrefix("+") { body = body.dropFirst() } else if body.hasPrefix("-") { sign = -1; body = body.dropFirst() }
        let digits = body.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, let amount = Int(digits), amount <= 100_000 else { return nil }
        let unit = body.dropFirst(digits.count)
        let n = sign * amount
        switch unit {
        case "h", "hour", "hours": return calendar.date(byAdding: .hour, value: n, to: now)
        case "d", "day", "days": return calendar.date(byAdding: .day, value: n, to: now).map(endOfDay)
        case "w", "wk", "week", "weeks": return calendar.date(byAdding: .day, value: 7 * n, to: now).map(endOfDay)
        case "m", "mo", "month", "months": return calendar.date(byAdding: .month, value: n, to: now).map(endOfDay)
        case "y", "year", "years": return calendar.date(byAdding: .year, value: n, to: now).map(endOfDay)
        default: return nil
        }
    }

    /// The start of this quarter (`quarters` 0) or of a later one.
    private func startOfQuarter(after quarters: Int) -> Date? {
        let month = calendar.component(.month, from: now)
        let year = calendar.component(.year, from: now)
        let first = (month - 1) / 3 * 3 + 1 + 3 * quarters
        return calendar.date(from: DateComponents(year: year + (first - 1) / 12, month: (first - 1) % 12 + 1, day: 1))
    }

    /// `15th`, `1st`, `2nd`, `23rd`: the next day of that number (this month when it is still
    /// to come, else the next month that has it: Taskwarrior takes November's "31st" as
    /// December 1st), at the end of the day.
    private func parseOrdinal(_ text: String) -> Date? {
        let digits = text.prefix { $0.isASCII && $0.isNumber }
        guard (1...2).contains(digits.count), let day = Int(digits), (1...31).contains(day) else { return nil }
        let suffix = text.dropFirst(digits.count)
        let expected = (day % 100 / 10 == 1) ? "th" : [1: "st", 2: "nd", 3: "rd"][day % 10] ?? "th"
        guard suffix == expected else { return nil }
        let today = calendar.component(.day, from: now)
        var month = calendar.component(.month, from: now), year = calendar.component(.year, from: now)
        if day <= today { month += 1 }
        for _ in 0..<12 {
            if month > 12 { month -= 12; year += 1 }
            if let date = calendar.isoDate(year: year, month: month, day: day, hour: 12, minute: 0, second: 0) { return endOfDay(date) }
            month += 1
        }
        return nil
    }

    /// An ISO 8601 duration from now, as Taskwarrior reads one (`P3D`, `PT2H`, `P1Y2M3DT4H5M6S`,
    /// `P2W`): exact seconds, a month 30 days and a year 365, not calendar steps.
    private func parseDuration(_ text: String) -> Date? {
        let upper = text.uppercased()
        guard upper.hasPrefix("P"), upper.count > 1 else { return nil }
        var seconds = 0
        var inTime = false
        var number = ""
        var any = false, timeParts = 0
        for character in upper.dropFirst() {
            if character.isASCII && character.isNumber {
                guard number.count < 7 else { return nil }
                number.append(character)
                continue
            }
            if character == "T" {
                guard !inTime, number.isEmpty else { return nil }
                inTime = true
                continue
            }
            guard let value = Int(number) else { return nil }
            let unit: Int
            switch (character, inTime) {
            case ("Y", false): unit = 365 * 86_400
            case ("M", false): unit = 30 * 86_400
            case ("W", false): unit = 7 * 86_400
            case ("D", false): unit = 86_400
            case ("H", true): unit = 3_600
            case ("M", true): unit = 60
            case ("S", true): unit = 1
            default: return nil
            }
            seconds += value * unit
            number = ""
            any = true
            if inTime { timeParts += 1 }
        }
        // A "T" is followed by at least one time part (P1DT is not a duration).
        guard any, number.isEmpty, !inTime || timeParts > 0 else { return nil }
        return now.addingTimeInterval(Double(seconds))
    }

    private func parseAbsolute(_ text: String) -> Date? {
        // Taskwarrior's own form, 20261201T143000Z (or ...T1430Z): UTC.
        if text.count == 16 || text.count == 14, text.hasSuffix("Z") || text.hasSuffix("z") {
            let compact = text.count == 14 ? String(text.dropLast()) + "00Z" : text
            if let date = TaskwarriorFormat.parseDate(compact.uppercased()), compact.dropFirst(8).first == "T" { return date }
        }
        let parts = text.split(separator: "-")
        // A bare date: the end of that day, locally.
        if parts.count == 3, text.count == 10, let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]) {
            // Noon exists on every day; midnight does not where the clocks skip it.
            guard let date = calendar.isoDate(year: y, month: m, day: d, hour: 12, minute: 0, second: 0) else { return nil }
            return endOfDay(date)
        }
        // A date and time: with a zone as written, without one in local time.
        let hasZone = text.hasSuffix("Z") || text.hasSuffix("z") || text.dropFirst(16).contains("+") || text.dropFirst(16).contains("-")
        guard let utc = ISO8601.parse(text) else { return nil }
        if hasZone { return utc }
        // The written wall-clock time, in the zone's offset of that local time (an offset
        // looked up at the UTC reading is an hour off next to a transition).
        let whole = utc.timeIntervalSince1970.rounded(.down)
        let f = ISO8601.fields(ofWholeSeconds: Int(whole))
        return calendar.isoDate(year: f.year, month: f.month, day: f.day, hour: f.hour, minute: f.minute, second: f.second)?
            .addingTimeInterval(utc.timeIntervalSince1970 - whole)
    }
}

extension Calendar {
    /// The date of wall-clock fields in the calendar's zone, counted in the proleptic
    /// Gregorian calendar as ISO 8601 does, or nil for a day the month does not have.
    /// Foundation's Gregorian calendar counts Julian days before October 1582 (refusing
    /// 1582-10-05 to 14, reading 0001-01-01 two days early); from 1583 on both agree and
    /// Foundation's is used, for its handling of clock changes.
    func isoDate(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Date? {
        guard (1...9999).contains(year), let utc = ISO8601.date(year: year, month: month, day: day, hour: hour, minute: minute, second: second) else {
            return nil
        }
        guard year < ISO8601.reformYear else {
            let date = self.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second))
            return date.flatMap { component(.day, from: $0) == day ? $0 : nil }
        }
        // Before any clock change: the zone's offset then (local mean time) is fixed.
        let offset = timeZone.secondsFromGMT(for: utc)
        return utc.addingTimeInterval(-Double(timeZone.secondsFromGMT(for: utc.addingTimeInterval(-Double(offset)))))
    }

    /// Year, month, day, hour, minute and weekday (1 = Sunday) of `date` in the calendar's
    /// zone, in the proleptic Gregorian calendar (see ``isoDate(year:month:day:hour:minute:second:)``).
    func isoFields(of date: Date) -> (year: Int, month: Int, day: Int, hour: Int, minute: Int, weekday: Int) {
        if date.timeIntervalSince1970 >= Double(ISO8601.reformStart) + 86_400 {
            let c = dateComponents([.year, .month, .day, .hour, .minute, .weekday], from: date)
            return (c.year ?? 0, c.month ?? 1, c.day ?? 1, c.hour ?? 0, c.minute ?? 0, c.weekday ?? 1)
        }
        let seconds = Int(date.timeIntervalSince1970.rounded(.down)) + timeZone.secondsFromGMT(for: date)
        let f = ISO8601.fields(ofWholeSeconds: seconds)
        let days = (seconds >= 0 ? seconds : seconds - 86_399) / 86_400
        // 1970-01-01 was a Thursday (5).
        return (f.year, f.month, f.day, f.hour, f.minute, ((days % 7 + 7 + 4) % 7) + 1)
    }

    /// The calendar taskctl reckons days in: Gregorian, in the user's zone, weeks from Monday.
    static func taskctl(in timeZone: TimeZone) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        calendar.firstWeekday = 2
        return calendar
    }
}

/// Priorities as people type them: none|low|medium|high, n|l|m|h, 0..3.
enum Priority {
    static let names = ["none", "low", "medium", "high"]

    static func parse(_ text: String) throws -> Int64 {
        switch text.lowercased() {
        case "none", "n", "0": return 0
        case "low", "l", "1": return 1
        case "medium", "m", "med", "2": return 2
        case "high", "h", "3": return 3
        default: throw CLIError.usage("bad priority '\(text)'; use none, low, medium or high (or n, l, m, h, 0-3)")
        }
    }

    static func name(_ value: Int64) -> String {
        names.indices.contains(Int(value)) ? names[Int(value)] : String(value)
    }

    /// Taskwarrior's letters by stored priority ("" for none).
    static let letters = ["", "L", "M", "H"]

    /// Taskwarrior's letter: H, M or L ("" for none).
    static func letter(_ value: Int64) -> String {
        letters.indices.contains(Int(value)) ? letters[Int(value)] : ""
    }
}
