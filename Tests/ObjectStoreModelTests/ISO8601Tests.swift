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

    /// Dates are computed without Foundation's calendar; from 1583 on every field must be
    /// what Foundation's Gregorian calendar says, both ways, leap days and years before 1970
    /// included.
    @Test func agreesWithFoundationsCalendarFrom1583() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        var generator = SeededRandom(seed: 42)
        var seconds: [Int] = [ISO8601.reformStart, 0, -1, 86_399, 86_400, 951_782_400, 951_868_799, -2_203_891_200, 253_402_300_799]
        for _ in 0..<4_000 { seconds.append(Int(generator.next() % 263_000_000_000) - 9_600_000_000) }
        for second in seconds where second < 253_402_300_800 && second >= ISO8601.reformStart {
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

    /// Before 1583 too the calendar is the proleptic Gregorian one, as ISO 8601 counts
    /// (Foundation's counts Julian days there): 0001-01-01 is the first day a store keeps,
    /// the ten days October 1582 skipped exist, 1500 has no leap day, and days count on
    /// without a gap across the reform. Offsets go to +-18:00 and no further.
    @Test func countsTheProlepticGregorianCalendarBefore1583() throws {
        #expect(ISO8601.parse("0001-01-01")?.timeIntervalSince1970 == -62_135_596_800)
        #expect(ISO8601.parse("0001-01-01") == ISO8601.supportedDates.lowerBound)
        #expect(ISO8601.parse("0000-12-31") == nil)
        for day in 4...15 {
            let text = String(format: "1582-10-%02dT12:00:00Z", day)
            let date = try #require(ISO8601.parse(text), "\(text)")
            #expect(ISO8601.format(date) == text)
            #expect(date.timeIntervalSince1970 - (ISO8601.parse("1582-10-04T12:00:00Z")?.timeIntervalSince1970 ?? 0) == Double((day - 4) * 86_400))
        }
        #expect(ISO8601.parse("1500-02-29") == nil)
        #expect(ISO8601.parse("1200-02-29") != nil)
        var generator = SeededRandom(seed: 7)
        for _ in 0..<2_000 {
            let second = Int(generator.next() % UInt64(ISO8601.reformStart + 62_135_596_800)) - 62_135_596_800
            let date = Date(timeIntervalSince1970: Double(second))
            #expect(ISO8601.parse(ISO8601.format(date)) == date, "\(second)")
        }
        #expect(ISO8601.parse("2026-12-01T10:00:00+18:00").map(ISO8601.format) == "2026-11-30T16:00:00Z")
        #expect(ISO8601.parse("2026-12-01T10:00:00-18:00").map(ISO8601.format) == "2026-12-02T04:00:00Z")
        for text in ["2026-12-01T10:00:00+99:00", "2026-12-01T10:00:00+18:01", "2026-12-01T10:00:00-19:00", "2026-12-01T10:00:00+05:60"] {
            #expect(ISO8601.parse(text) == nil, "\(text)")
        }
    }

    @Test func roundTripsToTheMicrosecond() throws {
        let date = Date(timeIntervalSince1970: 1_795_000_000.123456)
        let back = try #require(ISO8601.parse(ISO8601.format(date)))
        #expect(abs(back.timeIntervalSince1970 - date.timeIntervalSince1970) < 0.000_001)
    }
}
