import Foundation
import Testing
@testable import ObjectStoreModel

@Suite struct ISO8601Tests {
    @Test func parsesTheFormsSchemaFilesUse() throws {
        let midnight = try #require(ISO8601.parse("2026-12-01"))
        #expect(ISO8601.format(midnight) == "2026-12-01T00:00:00Z")
        #expect(ISO8601.parse("2026-12-01T14:30:00Z").map(ISO8601.format) == "2026-12-01T14:30:00Z")
        #expect(ISO8601.parse("2026-12-01T14:30").map(ISO8601.format) == "2026-12-01T14:30:00Z")
        #expect(ISO8601.parse("2026-12-01T16:30:00+02:00").map(ISO8601.format) == "2026-12-01T14:30:00Z")
        #expect(ISO8601.parse("2026-12-01T14:30:00.25Z").map(ISO8601.format) == "2026-12-01T14:30:00.25Z")
    }

    @Test(arguments: ["", "2026-13-01", "2026-02-30", "2026-12-01T25:00", "2026-12-01Tfoo", "12/01/2026", "2026-12-01T14:30:00Zjunk"])
    func rejectsNonsense(text: String) {
        #expect(ISO8601.parse(text) == nil)
    }

    /// Dates are computed without Foundation's calendar from 1583 on; every field must be
    /// what Foundation's Gregorian calendar says, both ways, leap days and years before 1970
    /// included, and the day before the switch is still Foundation's.
    @Test func agreesWithFoundationsCalendar() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        var generator = SeededRandom(seed: 42)
        var seconds: [Int] = [ISO8601.reformStart - 1, ISO8601.reformStart, 0, -1, 86_399, 86_400, 951_782_400, 951_868_799,
                              -2_203_891_200, 253_402_300_799, -62_135_596_800]
        for _ in 0..<4_000 { seconds.append(Int(generator.next() % 263_000_000_000) - 9_600_000_000) }
        for second in seconds where second < 253_402_300_800 {
            let date = Date(timeIntervalSince1970: Double(second))
            let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
            let expected = String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0, c.second ?? 0)
            #expect(ISO8601.format(date) == expected, "\(second)")
            #expect(ISO8601.parse(expected) == date, "\(expected)")
        }
        for text in ["2000-02-29", "2024-02-29", "1600-02-29", "1583-01-01"] { #expect(ISO8601.parse(text) != nil, "\(text)") }
        for text in ["1900-02-29", "2023-02-29", "2026-04-31", "1700-02-29"] { #expect(ISO8601.parse(text) == nil, "\(text)") }
        #expect(ISO8601.parse("2026-12-31T23:59:60Z") == ISO8601.parse("2027-01-01T00:00:00Z"))
    }

    @Test func roundTripsToTheMicrosecond() throws {
        let date = Date(timeIntervalSince1970: 1_795_000_000.123456)
        let back = try #require(ISO8601.parse(ISO8601.format(date)))
        #expect(abs(back.timeIntervalSince1970 - date.timeIntervalSince1970) < 0.000_001)
    }
}
