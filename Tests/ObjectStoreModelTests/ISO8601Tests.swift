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

    @Test func roundTripsToTheMicrosecond() throws {
        let date = Date(timeIntervalSince1970: 1_795_000_000.123456)
        let back = try #require(ISO8601.parse(ISO8601.format(date)))
        #expect(abs(back.timeIntervalSince1970 - date.timeIntervalSince1970) < 0.000_001)
    }
}
