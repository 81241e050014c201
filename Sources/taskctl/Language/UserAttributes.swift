import Foundation
import ObjectStore
import ObjectStoreModel

/// Taskwarrior's user-defined attributes (`uda.NAME.type`, `.label`, `.values`, `.default`
/// in the settings): a task's value is kept among its fields Taskwarrior has and taskctl does
/// not model (exported and synced as Taskwarrior writes it: a number, or text).
struct UserAttribute: Sendable {
    enum Kind: String, Sendable { case string, numeric, date, duration }
    var kind: Kind = .string
    var label: String?
    /// The values a string attribute may take (`uda.NAME.values`), in order.
    var values: [String]?
    var defaultValue: String?

    /// Names Taskwarrior gives its own attributes: never a user-defined one.
    static let reserved: Set<String> = ["description", "project", "priority", "due", "wait", "scheduled", "until", "start", "end", "entry",
                                        "status", "tags", "uuid", "id", "recur", "depends", "modified", "parent", "mask", "imask",
                                        "annotations", "urgency", "location", "limit", "rc"]

    /// A name as Taskwarrior allows it: letters, digits and _, starting with a letter.
    static func isName(_ name: String) -> Bool {
        name.first?.isLetter == true && name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
    }

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

    /// A stored value (JSON text) as text.
    static func text(ofJSON json: String) -> String {
        guard let node = try? JSONParser.parse(json) else { return json }
        switch node.kind {
        case .string(let text): return text
        case .number(let number): return number
        case .array(let items):
            // A list of strings (Taskwarrior 2.6's depends) as Taskwarrior's attribute holds
            // it: comma-separated.
            let texts = items.compactMap { item -> String? in if case .string(let text) = item.kind { return text } else { return nil } }
            return texts.count == items.count ? texts.joined(separator: ",") : json
        default: return json
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

    /// Sets (or removes) the values on a task's kept fields.
    static func apply(_ values: [(name: String, json: String?)], to task: ManagedObject) throws {
        guard !values.isEmpty else { return }
        var extras = ExtrasText.decode(task["extras"])
        for (name, json) in values {
            extras.removeAll { $0.key == name }
            if let json { extras.append((name, json)) }
        }
        try task.setValue(ExtrasText.encode(extras), forKey: "extras")
    }
}
