import Foundation
import Testing
@testable import taskctl

/// taskctl trims a task's text, names and tags with the standard library (Foundation's
/// trimming cost a runtime scan at every start): it must trim what Foundation's character
/// sets say, no more and no less.
@Suite struct TextTests {
    /// Every space separator, tab and line break around a word, alone and in pairs.
    static let edges: [String] = ["", " ", "\t", "\u{00A0}", "\u{1680}", "\u{2003}", "\u{202F}", "\u{205F}", "\u{3000}",
                                  "\n", "\r\n", "\u{0085}", "\u{2028}", "\u{2029}", "\u{000B}", "\u{000C}", " \n", "\n\t\u{3000}",
                                  "\u{200B}", "x", "\u{FEFF}"]

    @Test func trimmingAgreesWithFoundation() {
        for head in Self.edges {
            for tail in Self.edges {
                for body in ["Buy milk", "a\n b", "é", ""] {
                    let text = head + body + tail
                    #expect(text.trimmingBlanks() == text.trimmingCharacters(in: .whitespaces), "\(Array(text.unicodeScalars))")
                    #expect(text.trimmingWhiteSpace() == text.trimmingCharacters(in: .whitespacesAndNewlines), "\(Array(text.unicodeScalars))")
                    #expect(text[...].trimmingBlanks() == text.trimmingCharacters(in: .whitespaces))
                }
            }
        }
    }

    /// Each scalar of the planes where Unicode has white space, alone at both ends.
    @Test func everyScalarIsTrimmedAsFoundationTrimsIt() {
        for value in Array(0...0x3100) + [0xFEFF, 0x1D455, 0xE0020] {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = String(scalar) + "a" + String(scalar)
            #expect(text.trimmingBlanks() == text.trimmingCharacters(in: .whitespaces), "U+\(String(value, radix: 16))")
            #expect(text.trimmingWhiteSpace() == text.trimmingCharacters(in: .whitespacesAndNewlines), "U+\(String(value, radix: 16))")
        }
    }

    @Test func wordsAreJoinedBySingleSpaces() {
        #expect(["Buy", "milk", "", "now"].joinedBySpaces() == "Buy milk  now")
        #expect([String]().joinedBySpaces() == "")
        #expect(["one"].joinedBySpaces() == "one")
    }

    @Test func aTaskKeepsItsTextWithoutTheBlanksAround() throws {
        let runner = try TaskctlRunner()
        try runner.ok("add", "\u{3000} Buy\u{00A0}milk \t", "--tag", " shop\u{2003},\tfood ")
        #expect(try runner.texts() == ["Buy\u{00A0}milk"])
        #expect(try runner.tasks().first?["tags"] as? [String] == ["food", "shop"])
    }

    /// taskctl reads its environment from `environ` by bytes: the same names and values as
    /// Foundation's `ProcessInfo.environment`, UTF-8 and an "=" inside a value included.
    @Test func theEnvironmentIsReadAsFoundationReadsIt() {
        setenv("TASKCTL_TEXT_TEST_VALUE", "Zoë ☎ a=b", 1)
        let read = TaskCtl.processEnvironment()
        #expect(read["TASKCTL_TEXT_TEST_VALUE"] == "Zoë ☎ a=b")
        #expect(read == ProcessInfo.processInfo.environment)
    }

    /// An import checks its file's UTF-8 16 MiB at a time: a character across the boundary
    /// is whole, and a broken one at the boundary is still found.
    @Test func utf8IsCheckedAcrossPieces() {
        let piece = 1 << 24
        for character in ["é", "€", "😀"] {
            let bytes = Array(character.utf8)
            for shift in 0..<bytes.count {
                var text = [UInt8](repeating: UInt8(ascii: "a"), count: piece - shift)
                text += bytes + Array("tail".utf8)
                #expect(ImportCommand.isUTF8(text), "\(character) at -\(shift)")
                var broken = text
                broken.remove(at: piece - shift)  // its first byte gone: stray continuations
                #expect(!ImportCommand.isUTF8(broken), "\(character) at -\(shift), broken")
            }
        }
        #expect(ImportCommand.isUTF8([]))
        #expect(!ImportCommand.isUTF8([0xFF]))
    }

    /// Urgency is written as Taskwarrior prints it, C's `%.0f` for a whole number and `%g`
    /// for three decimals: every thousandth from -200 to 200, values that round to a
    /// thousandth from either side, to zero from below, and large ones.
    @Test func urgencyTextIsWhatPrintfWrites() {
        func printf(_ value: Double) -> String {
            let rounded = (value * 1000).rounded() / 1000
            return rounded == rounded.rounded() ? String(format: "%.0f", rounded) : String(format: "%g", rounded)
        }
        var values: [Double] = [0, -0.0, -0.0004, 0.0004, 0.0005, -0.0005, 1e6, 123_456.5, -99.9995, 99.9995, 1e20, .leastNonzeroMagnitude]
        for k in -200_000...200_000 { values.append(Double(k) / 1000) }
        var random = SeededRandom(seed: 53)
        for _ in 0..<20_000 { values.append((Double(random.next() % 2_000_000_000) - 1e9) / 1e7) }
        var wrong: [String] = []
        for value in values where Urgency.text(value) != printf(value) { wrong.append("\(value): \(Urgency.text(value)), printf \(printf(value))") }
        #expect(wrong.isEmpty, "\(wrong.prefix(10))")
    }
}
