import Foundation

/// A recurrence period as Taskwarrior 2.6 reads and counts it (its `getNextRecurrence`):
/// calendar months for `monthly`, `Nm`, `PnM`, `quarterly`, `Nq`, `bimonthly`, `semiannual`
/// (the day kept, or the month's last day), years for `yearly`, `annual`, `P1Y`, `biyearly`,
/// `P2Y`, Monday to Friday for `weekdays`, and any other duration as a length of time
/// (`daily`, `weekly`, `3d`, `2w`, `P1W`; `2mo` and `1mth` are 30 days each, as there).
/// Whole days are counted on the calendar of the user's time zone, so a weekly series keeps
/// its clock time across a change of the clocks (Taskwarrior adds seconds).
struct Recurrence: Equatable {
    enum Step: Equatable {
        /// Calendar months; `keepsTime` false for `PnM`, which Taskwarrior moves to midnight.
        case months(Int, keepsTime: Bool)
        /// Calendar years; `leapDay` moves 29 February to the 28th (yearly, annual, P1Y).
        case years(Int, leapDay: Bool)
        case weekdays
        case days(Int)
        case seconds(Double)
    }
    var step: Step

    init?(_ text: String) {
        let word = text.trimmingBlanks()
        let lower = word.lowercased()
        func count(_ digits: Substring) -> Int? { Int(digits).flatMap { (1...10_000).contains($0) ? $0 : nil } }
        switch word {
        case "monthly", "P1M": step = .months(1, keepsTime: true); return
        case "weekdays": step = .weekdays; return
        case "quarterly", "P3M": step = .months(3, keepsTime: true); return
        case "semiannual", "P6M": step = .months(6, keepsTime: true); return
        case "bimonthly", "P2M": step = .months(2, keepsTime: true); return
        case "biannual", "biyearly", "P2Y": step = .years(2, leapDay: false); return
        case "annual", "yearly", "P1Y": step = .years(1, leapDay: true); return
        default: break
        }
        if word.first?.isNumber == true, word.hasSuffix("m"), word.dropLast().allSatisfy(\.isNumber) {
            guard let n = count(word.dropLast()) else { return nil }
            step = .months(n, keepsTime: true)
            return
        }
        if word.hasPrefix("P"), word.hasSuffix("M"), word.count > 2, word.dropFirst().dropLast().allSatisfy(\.isNumber) {
            guard let n = count(word.dropFirst().dropLast()) else { return nil }
            step = .months(n, keepsTime: false)
            return
        }
        if word.first?.isNumber == true, word.hasSuffix("q"), word.dropLast().allSatisfy(\.isNumber) {
            guard let n = count(word.dropLast()) else { return nil }
            step = .months(3 * n, keepsTime: true)
            return
        }
        // A duration.
        let named: [String: Double] = ["daily": 86_400, "day": 86_400, "weekly": 604_800, "week": 604_800, "biweekly": 1_209_600,
                                       "fortnight": 1_209_600, "sennight": 604_800, "hourly": 3_600, "minutely": 60, "secondly": 1]
        guard let seconds = named[lower] ?? FilterValue.seconds(Substring(word)), seconds >= 1, seconds <= 100 * 31_536_000 else { return nil }
        step = seconds.truncatingRemainder(dividingBy: 86_400) == 0 ? .days(Int(seconds / 86_400)) : .seconds(seconds)
    }

    /// The next date of a series after `date`, in the calendar of the user's time zone.
    func next(after date: Date, calendar: Calendar) -> Date? {
        switch step {
        case .days(let n): return calendar.date(byAdding: .day, value: n, to: date)
        case .seconds(let seconds): return date.addingTimeInterval(seconds)
        case .weekdays:
            // Friday: Monday; Saturday: Monday; otherwise the next day.
            let weekday = calendar.component(.weekday, from: date)
            return calendar.date(byAdding: .day, value: weekday == 6 ? 3 : weekday == 7 ? 2 : 1, to: date)
        case .months(let n, let keepsTime):
            var parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
            let total = (parts.month ?? 1) - 1 + n
            parts.year = (parts.year ?? 0) + total / 12
            parts.month = total % 12 + 1
            if !keepsTime { parts.hour = 0; parts.minute = 0; parts.second = 0 }
            return Self.valid(parts, calendar: calendar)
        case .years(let n, let leapDay):
            var parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
            parts.year = (parts.year ?? 0) + n
            if leapDay && parts.month == 2 && parts.day == 29 { parts.day = 28 }
            return Self.valid(parts, calendar: calendar)
        }
    }

    /// The date of `parts`, the day moved back until the month has it (31 -> 30 -> ... 28).
    private static func valid(_ parts: DateComponents, calendar: Calendar) -> Date? {
        var parts = parts
        for _ in 0..<4 {
            if let date = calendar.date(from: parts), calendar.component(.day, from: date) == parts.day { return date }
            parts.day = (parts.day ?? 1) - 1
        }
        return calendar.date(from: parts)
    }

    static let help = "daily, weekdays, weekly, biweekly, monthly, quarterly, yearly, or a number and a unit (3d, 2w, 6m, 1y, P1W, P1M)"
}
