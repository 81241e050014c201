/// Trimming and joining done by the standard library alone. Foundation's
/// `trimmingCharacters(in:)` goes through NSString and a generic UTF-16 decoding, and an
/// unspecialised `joined(separator:)` asks the runtime for a conformance: each costs a scan
/// of every conformance record in the binary the first time (about 2% of an `add` each,
/// measured with callgrind).
extension StringProtocol {
    /// Without the spaces and tabs at either end: what Foundation's
    /// `CharacterSet.whitespaces` holds (tab, the Unicode space separators and, as
    /// CoreFoundation has it, the zero-width space U+200B); line breaks are kept.
    func trimmingBlanks() -> String {
        trimming { $0 == "\t" || $0 == "\u{200B}" || $0.properties.generalCategory == .spaceSeparator }
    }

    /// Without white space or line breaks at either end: what
    /// `CharacterSet.whitespacesAndNewlines` holds (Unicode's White_Space and U+200B).
    func trimmingWhiteSpace() -> String {
        trimming { $0 == "\u{200B}" || $0.properties.isWhitespace }
    }

    private func trimming(_ drops: (Unicode.Scalar) -> Bool) -> String {
        let scalars = String(self).unicodeScalars
        guard let first = scalars.firstIndex(where: { !drops($0) }), let last = scalars.lastIndex(where: { !drops($0) }) else { return "" }
        return String(scalars[first...last])
    }
}

extension Array where Element == String {
    /// The words with a space between each two (`joined(separator: " ")`).
    func joinedBySpaces() -> String {
        var text = ""
        text.reserveCapacity(reduce(count) { $0 + $1.utf8.count })
        for (index, word) in enumerated() {
            if index > 0 { text += " " }
            text += word
        }
        return text
    }
}
