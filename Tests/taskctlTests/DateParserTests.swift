import Foundation
import Testing
import ObjectStoreModel
@testable import taskctl

@Suite struct DateParserTests {
    // Sunday 2026-11-22 12:00 UTC.
    let parser = DateParser(now: ISO8601.parse("2026-11-22T12:00:00Z")!, timeZone: TimeZone(identifier: "UTC")!)

    @Test(arguments: [
        ("2026-12-01", "2026-12-01T23:59:59Z"),
        ("2026-12-01T14:30", "2026-12-01T14:30:00Z"),
        ("2026-12-01T14:30:15Z", "2026-12-01T14:30:15Z"),
        ("2026-12-01T14:30+02:00", "2026-12-01T12:30:00Z"),
        ("today", "2026-11-22T23:59:59Z"), ("eod", "2026-11-22T23:59:59Z"), ("TODAY", "2026-11-22T23:59:59Z"),
        ("tomorrow", "2026-11-23T23:59:59Z"), ("yesterday", "2026-11-21T23:59:59Z"), ("now", "2026-11-22T12:00:00Z"),
        ("monday", "2026-11-23T23:59:59Z"), ("mon", "2026-11-23T23:59:59Z"), ("friday", "2026-11-27T23:59:59Z"),
        ("sunday", "2026-11-29T23:59:59Z"),
        ("eow", "2026-11-22T23:59:59Z"), ("eom", "2026-11-30T23:59:59Z"), ("eoy", "2026-12-31T23:59:59Z"),
        ("3d", "2026-11-25T23:59:59Z"), ("+2w", "2026-12-06T23:59:59Z"), ("-1d", "2026-11-21T23:59:59Z"),
        ("1m", "2026-12-22T23:59:59Z"), ("1y", "2027-11-22T23:59:59Z"), ("4h", "2026-11-22T16:00:00Z"), ("-2h", "2026-11-22T10:00:00Z"),
    ])
    func everyDateForm(text: String, expected: String) throws {
        #expect(ISO8601.format(try parser.parse(text)) == expected)
    }

    /// Taskwarrior's date words, as Taskwarrior 2.6.2 reads them (`task calc WORD` and
    /// `task add x due:WORD`, run on Wednesday 2026-11-25 at 13:05:16 UTC): the start words
    /// at their first second, eoq at the quarter's last, later/someday at 9999-12-30, ISO
    /// durations as exact seconds from now (a month 30 days, a year 365), and Taskwarrior's
    /// compact form. Ordinals are the next such day at its end (taskctl's day words mean the
    /// end of the day; Taskwarrior says midnight), and November's "31st" is December 31st
    /// (Taskwarrior rolls it over to December 1st).
    @Test func taskwarriorsDateWords() throws {
        let wednesday = DateParser(now: try #require(ISO8601.parse("2026-11-25T13:05:16Z")), timeZone: try #require(TimeZone(identifier: "UTC")))
        let expected: [(String, String)] = [
            ("sod", "2026-11-25T00:00:00Z"), ("sow", "2026-11-23T00:00:00Z"), ("som", "2026-11-01T00:00:00Z"), ("soq", "2026-10-01T00:00:00Z"),
            ("soy", "2026-01-01T00:00:00Z"), ("eoq", "2026-12-31T23:59:59Z"), ("later", "9999-12-30T00:00:00Z"), ("someday", "9999-12-30T00:00:00Z"),
            ("P3D", "2026-11-28T13:05:16Z"), ("PT2H", "2026-11-25T15:05:16Z"), ("P1W", "2026-12-02T13:05:16Z"), ("P1M", "2026-12-25T13:05:16Z"),
            ("P1Y2M3DT4H5M6S", "2028-01-27T17:10:22Z"), ("20261201T143000Z", "2026-12-01T14:30:00Z"), ("20261201T1430Z", "2026-12-01T14:30:00Z"),
            ("15th", "2026-12-15T23:59:59Z"), ("1st", "2026-12-01T23:59:59Z"), ("2nd", "2026-12-02T23:59:59Z"), ("3rd", "2026-12-03T23:59:59Z"),
            ("22nd", "2026-12-22T23:59:59Z"), ("11th", "2026-12-11T23:59:59Z"), ("25th", "2026-12-25T23:59:59Z"), ("26th", "2026-11-26T23:59:59Z"),
            ("30th", "2026-11-30T23:59:59Z"), ("31st", "2026-12-31T23:59:59Z"), ("eow", "2026-11-29T23:59:59Z"), ("eom", "2026-11-30T23:59:59Z"),
        ]
        for (word, date) in expected {
            #expect(try ISO8601.format(wednesday.parse(word)) == date, "\(word)")
        }
        for word in ["21th", "1nd", "32nd", "0th", "P", "PT", "P3", "P3X", "PT3D", "P1DT", "20261301T143000Z"] {
            #expect(throws: CLIError.self, "\(word)") { try wednesday.parse(word) }
        }
        // In a zone, the start words start the local day (22:05 in Tokyo: its 25th began at 15:00 UTC on the 24th).
        let tokyo = DateParser(now: try #require(ISO8601.parse("2026-11-25T13:05:16Z")), timeZone: try #require(TimeZone(identifier: "Asia/Tokyo")))
        #expect(try ISO8601.format(tokyo.parse("sod")) == "2026-11-24T15:00:00Z")
    }

    /// The years 0001-9999 of the proleptic Gregorian calendar, as ISO 8601 and the docs say:
    /// 0001-01-01 and the ten days of October 1582 that Foundation's Julian-then-Gregorian
    /// calendar does not have are dates, read and shown as written, in any zone; 1500-02-29
    /// is not; an offset past +-18:00 is refused.
    @Test func datesAreProlepticGregorianAndOffsetsBounded() throws {
        for (text, expected) in [("0001-01-01", "0001-01-01T23:59:59Z"), ("1582-10-05", "1582-10-05T23:59:59Z"), ("1582-10-14", "1582-10-14T23:59:59Z"),
                                 ("1582-10-04T10:00", "1582-10-04T10:00:00Z"), ("1200-02-29", "1200-02-29T23:59:59Z"),
                                 ("2026-12-01T10:00+18:00", "2026-11-30T16:00:00Z")] {
            #expect(try ISO8601.format(parser.parse(text)) == expected, "\(text)")
        }
        for text in ["1500-02-29", "0000-01-01", "2026-12-01T10:00+99:00", "2026-12-01T10:00-18:30"] {
            #expect(throws: CLIError.self, "\(text)") { try parser.parse(text) }
        }
        // In a zone with an offset of its own then (New York's local mean time, -4:56:02),
        // the typed day is the local day, shown back as typed.
        let zone = try #require(TimeZone(identifier: "America/New_York"))
        let local = DateParser(now: parser.now, timeZone: zone)
        let calendar = Calendar.taskctl(in: zone)
        for text in ["1582-10-10", "0001-01-01", "1000-06-15"] {
            let date = try local.parse(text)
            let fields = calendar.isoFields(of: date)
            #expect(String(format: "%04d-%02d-%02d %02d:%02d", fields.year, fields.month, fields.day, fields.hour, fields.minute) == text + " 23:59", "\(text)")
        }
        // 1582-10-15 was a Friday (6), and so the day before it a Thursday.
        #expect(calendar.isoFields(of: try local.parse("1582-10-15")).weekday == 6)
        #expect(calendar.isoFields(of: try local.parse("1582-10-14")).weekday == 5)
    }

    @Test(arguments: [
        // Zones whose clocks skip midnight at the start of summer time.
        ("America/Santiago", "2026-09-06", "2026-09-07T02:59:59Z"),
        ("America/Havana", "2026-03-08", "2026-03-09T03:59:59Z"),
        ("Asia/Beirut", "2026-03-29", "2026-03-29T20:59:59Z"),
        // Local times right after a transition.
        ("America/New_York", "2026-03-08T03:30", "2026-03-08T07:30:00Z"),
        ("America/New_York", "2026-03-08T01:30", "2026-03-08T06:30:00Z"),
        ("America/New_York", "2026-11-01T03:30", "2026-11-01T08:30:00Z"),
    ])
    func daysAndTimesAroundDaylightSavingTransitions(zone: String, text: String, expected: String) throws {
        let local = DateParser(now: ISO8601.parse("2026-01-15T12:00:00Z")!, timeZone: TimeZone(identifier: zone)!)
        #expect(ISO8601.format(try local.parse(text)) == expected)
    }

    @Test func tomorrowOnADayWithoutMidnightEndsThatDay() throws {
        // Santiago, the day before the clocks skip 2026-09-06 00:00.
        let parser = DateParser(now: ISO8601.parse("2026-09-05T15:00:00Z")!, timeZone: TimeZone(identifier: "America/Santiago")!)
        #expect(ISO8601.format(try parser.parse("tomorrow")) == "2026-09-07T02:59:59Z")
        #expect(ISO8601.format(try parser.parse("today")) == "2026-09-06T03:59:59Z")
    }

    @Test func aTimeWithoutAZoneIsLocal() throws {
        let paris = DateParser(now: ISO8601.parse("2026-11-22T12:00:00Z")!, timeZone: TimeZone(identifier: "Europe/Paris")!)
        #expect(ISO8601.format(try paris.parse("2026-12-01T14:30")) == "2026-12-01T13:30:00Z")
        #expect(ISO8601.format(try paris.parse("2026-12-01")) == "2026-12-01T22:59:59Z")
        #expect(ISO8601.format(try paris.parse("today")) == "2026-11-22T22:59:59Z")
    }

    @Test(arguments: ["", "soon", "2026-13-01", "2026-02-30", "12/01/2026", "3x", "+", "mo", "99999999d"])
    func nonsenseIsRefusedListingTheForms(text: String) {
        #expect {
            try parser.parse(text)
        } throws: { error in
            (error as? CLIError)?.message.contains("use one of: 2026-12-01") == true && (error as? CLIError)?.status == 1
        }
    }

    @Test(arguments: [("none", 0), ("N", 0), ("0", 0), ("low", 1), ("l", 1), ("1", 1), ("Medium", 2), ("m", 2), ("2", 2), ("HIGH", 3), ("h", 3), ("3", 3)])
    func priorities(text: String, value: Int64) throws {
        #expect(try Priority.parse(text) == value)
    }

    @Test func badPrioritiesAreRefused() {
        #expect(throws: CLIError.self) { try Priority.parse("urgent") }
        #expect(throws: CLIError.self) { try Priority.parse("4") }
    }
}

@Suite struct DateParserFuzzTests {
    @Test func typedDatesNeverTrap() {
        let parser = DateParser(now: ISO8601.parse("2026-11-22T12:00:00Z")!, timeZone: TimeZone(identifier: "UTC")!)
        var state: UInt64 = 7
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            return z ^ (z >> 27)
        }
        let pieces = ["2026", "-", "12", "01", "T", "14:30", "Z", "+", "d", "w", "m", "y", "h", "monday", "eow", "tomorrow", "99999999999", "-0", ":", " ", "é", "0"]
        let cases = ProcessInfo.processInfo.environment["OBJECTSTORE_FUZZ_CASES"].flatMap(Int.init) ?? 3_000
        for _ in 0..<cases {
            let text = (0..<Int(next() % 6)).map { _ in pieces[Int(next() % UInt64(pieces.count))] }.joined()
            _ = try? parser.parse(text)
        }
    }
}

/// Taskwarrior imports read UUIDs and compact dates in place; both must accept and refuse
/// exactly what Foundation and the ISO-8601 reader do.
@Suite struct TaskwarriorFieldTests {
    @Test func uuidsReadAsFoundationReadsThem() {
        var texts = ["00000000-0000-0000-0000-000000000001", "6F9619FF-8B86-D011-B42D-00C04FC964FF", "6f9619ff-8b86-d011-b42d-00c04fc964ff",
                     "6F9619FF8B86-D011-B42D-00C04FC964FF0", "6F9619FF-8B86-D011-B42D-00C04FC964F", "6F9619FF-8B86-D011-B42D-00C04FC964FFF",
                     "6G9619FF-8B86-D011-B42D-00C04FC964FF", "{6F9619FF-8B86-D011-B42D-00C04FC964FF}", "", "6F9619FF_8B86_D011_B42D_00C04FC964FF"]
        for _ in 0..<200 { texts.append(UUID().uuidString.lowercased()) }
        for text in texts {
            #expect(TaskwarriorFormat.parseUUID(text) == UUID(uuidString: text), "\(text)")
        }
    }

    @Test func compactDatesReadAsTheirISOForm() {
        for (compact, iso) in [("20261122T143000Z", "2026-11-22T14:30:00Z"), ("20240229T000000Z", "2024-02-29T00:00:00Z"), ("15000101T120000Z", "1500-01-01T12:00:00Z")] {
            #expect(TaskwarriorFormat.parseDate(compact) == ISO8601.parse(iso), "\(compact)")
            #expect(TaskwarriorFormat.parseDate(compact) != nil)
        }
        for bad in ["20230229T000000Z", "20261322T143000Z", "2026112XT143000Z", "20261122T246000Z"] {
            #expect(TaskwarriorFormat.parseDate(bad) == nil, "\(bad)")
        }
    }
}
