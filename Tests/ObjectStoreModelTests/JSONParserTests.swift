import Testing
@testable import ObjectStoreModel

@Suite struct JSONParserTests {
    @Test func parsesEveryKindAndKeepsMemberOrder() throws {
        let node = try JSONParser.parse(#"{"b": [1, -2.5e3, true, false, null], "a": "x\"\u00e9\ud83d\ude00\n"}"#)
        let members = try #require(node.members)
        #expect(members.map(\.key) == ["b", "a"])
        #expect(members[0].value.elements?.map(\.kind) == [.number("1"), .number("-2.5e3"), .bool(true), .bool(false), .null])
        #expect(members[1].value.stringValue == "x\"é😀\n")
    }

    @Test func keepsNumberTextExactly() throws {
        let node = try JSONParser.parse("[9223372036854775807, 0.1000000000000000000001]")
        #expect(node.elements?.map(\.numberText) == ["9223372036854775807", "0.1000000000000000000001"])
    }

    @Test func recordsLineAndColumnOfValues() throws {
        let node = try JSONParser.parse("{\n  \"é\": 1,\n    \"k\": [true]\n}")
        let members = try #require(node.members)
        #expect(members[0].keyLocation == SourceLocation(line: 2, column: 3))
        #expect(members[0].value.location == SourceLocation(line: 2, column: 8))
        #expect(members[1].value.location == SourceLocation(line: 3, column: 10))
    }

    @Test(arguments: [
        ("{\"a\": 1,}", 1, 9, "expected a string key"),
        ("{\"a\" 1}", 1, 6, "expected ':'"),
        ("[1, 2", 1, 6, "unexpected end of input inside an array"),
        ("{\n\n  \"a\": tru }", 3, 8, "invalid literal, expected 'true'"),
        ("[01]", 1, 3, "leading zeros"),
        ("\"abc", 1, 5, "unterminated string"),
        ("\"\\q\"", 1, 3, "invalid escape"),
        ("[1] x", 1, 5, "unexpected text after the end"),
        ("", 1, 1, "unexpected end of input"),
        ("[\"\\ud800\"]", 1, 9, "unpaired surrogate"),
    ])
    func reportsSyntaxErrorsWithPosition(text: String, line: Int, column: Int, message: String) {
        #expect {
            try JSONParser.parse(text)
        } throws: { error in
            guard let error = error as? JSONSyntaxError else { return false }
            return error.location == SourceLocation(line: line, column: column) && error.message.contains(message)
        }
    }

    @Test func refusesHostileNestingWithoutCrashing() {
        let deep = String(repeating: "[", count: 100_000)
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(deep) }
    }

    /// A quoted string reads back as itself, escapes only what JSON requires (the quote, the
    /// backslash and controls, with the short forms for newline, return and tab) and keeps
    /// every other character as its UTF-8.
    @Test func quotedStringsReadBackAsWritten() throws {
        #expect(JSONText.quote("plain text") == "\"plain text\"")
        #expect(JSONText.quote("") == "\"\"")
        #expect(JSONText.quote("a\"b\\c\nd\re\tf\u{1}\u{1f}\u{7f}é😀") == #""a\"b\\c\nd\re\tf\u0001\u001f\#u{7f}é😀""#)
        var random = SeededRandom(seed: 53)
        let pieces: [String] = ["a", "\"", "\\", "\n", "\u{0}", "\u{8}", "\u{1b}", "é", "ß", "😀", "\u{301}", " ", "/", "\u{2028}", "K"]
        for length in [0, 1, 2, 3, 15, 16, 17, 200] {
            for _ in 0..<50 {
                let text = (0..<length).map { _ in random.pick(pieces) }.joined()
                let quoted = JSONText.quote(text)
                #expect(try JSONParser.parse(quoted).stringValue == text, "\(quoted)")
                #expect(!quoted.utf8.dropFirst().dropLast().contains { $0 < 0x20 }, "\(quoted)")
            }
        }
    }
}
