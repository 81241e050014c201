import Foundation

/// A recurrence period, in Taskwarrior's words: `daily`, `weekly`, `biweekly`, `monthly`,
/// `quarterly`, `yearly`, or a count and a unit (`3d`, `2w`, `2wks`, `6m`, `1y`).
struct Recurrence: Equatable {
    var unit: Calendar.Component
    var count: Int

    init?(_ text: String) {
        let word = text.lowercased().trimmingBlanks()
        let named: [String: (Calendar.Component, Int)] = [
            "daily": (.day, 1), "day": (.day, 1), "weekly": (.day, 7), "week": (.day, 7), "biweekly": (.day, 14), "fortnight": (.day, 14),
            "monthly": (.month, 1), "month": (.month, 1), "bimonthly": (.month, 2), "quarterly": (.month, 3), "semiannual": (.month, 6),
            "yearly": (.year, 1), "annual": (.year, 1), "year": (.year, 1), "biannual": (.year, 2), "biyearly": (.year, 2),
        ]
        if let (unit, count) = named[word] {
            self.unit = unit
            self.count = count
            return
        }
        let digits = word.prefix { $0.isNumber }
        let suffix = word.dropFirst(digits.count)
        guard let count = digits.isEmpty ? 1 : Int(digits), (1...1000).contains(count) else { return nil }
        let units: [String: (Calendar.Component, Int)] = [
            "d": (.day, 1), "day": (.day, 1), "days": (.day, 1),
            "w": (.day, 7), "wk": (.day, 7), "wks": (.day, 7), "week": (.day, 7), "weeks": (.day, 7),
            "m": (.month, 1), "mo": (.month, 1), "mos": (.month, 1), "month": (.month, 1), "months": (.month, 1),
            "q": (.month, 3), "qtr": (.month, 3), "qtrs": (.month, 3), "quarter": (.month, 3), "quarters": (.month, 3),
            "y": (.year, 1), "yr": (.year, 1), "yrs": (.year, 1), "year": (.year, 1), "years": (.year, 1),
        ]
        guard !digits.isEmpty, let (unit, multiple) = units[String(suffix)] else { return nil }
        self.unit = unit
        self.count = count * multiple
    }

    /// `date` moved on by one period, in the calendar of the user's time zone (a monthly
    /// task due on the 31st falls on the last day of a shorter month).
    func next(after date: Date, calendar: Calendar) -> Date? {
        calendar.date(byAdding: unit, value: count, to: date)
    }

    static let help = "daily, weekly, biweekly, monthly, quarterly, yearly, or a number and d, w, m or y (3d, 2w, 6m)"
}
