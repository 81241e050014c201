import Foundation
import ObjectStoreModel

/// A user attribute's values as a command gives them: checked with the settings, dates read
/// on the app's clock.
extension UserAttribute {
    /// The value as it is stored (JSON text), checked against the type and values; nil
    /// when `text` is empty (the attribute is removed).
    func stored(_ text: String, name: String, app: App) throws -> String? {
        guard !text.isEmpty else { return nil }
        switch kind {
        case .string:
            if let values, !values.contains(text) {
                throw CLIError.usage("'\(name):\(text)': \(name) takes \(values.filter { !$0.isEmpty }.joined(separator: ", ")) (uda.\(name).values)")
            }
            return JSONText.quote(text)
        case .numeric:
            guard let number = Double(text), number.isFinite else { throw CLIError.usage("'\(name):\(text)': \(name) takes a number") }
            return number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
        case .date:
            return JSONText.quote(TaskwarriorFormat.format(try app.parseDate(text)))
        case .duration:
            guard FilterValue.seconds(Substring(text)) != nil else { throw CLIError.usage("'\(name):\(text)': \(name) takes a duration (3d, 2h, P1W)") }
            return JSONText.quote(text)
        }
    }

    /// Takes `NAME:VALUE` words naming configured attributes out of a command's words
    /// (before `--`), as (name, stored JSON or nil to remove).
    static func take(from words: inout [String], config: Config, app: App) throws -> [(name: String, json: String?)] {
        guard !config.userAttributes.isEmpty else { return [] }
        var taken: [(String, String?)] = []
        var kept: [String] = []
        var textOnly = false
        for word in words {
            if word == "--" { textOnly = true }
            if !textOnly, let colon = word.firstIndex(of: ":") {
                let name = String(word[..<colon]).lowercased()
                if let attribute = config.userAttributes[name] {
                    taken.append((name, try attribute.stored(String(word[word.index(after: colon)...]), name: name, app: app)))
                    continue
                }
            }
            kept.append(word)
        }
        words = kept
        return taken
    }
}
