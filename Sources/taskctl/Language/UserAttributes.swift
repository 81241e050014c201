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
