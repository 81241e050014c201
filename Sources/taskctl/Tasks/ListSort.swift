import Foundation

/// `list --sort` and the `sort` setting: keys, comma-separated, each `-` for descending.
enum ListSort {
    /// The keys `list` sorts by.
    static let keys = ["urgency", "id", "text", "priority", "due", "location", "project", "created", "status"]

    static func parse(_ text: String) throws -> [(key: String, descending: Bool)] {
        try text.split(separator: ",").map { part in
            var key = part.trimmingBlanks()
            // Urgency reads most urgent first unless +urgency asks otherwise.
            let descending = key.hasPrefix("-") || key == "urgency"
            if key.hasPrefix("-") || key.hasPrefix("+") { key.removeFirst() }
            guard keys.contains(key) else {
                let hint = NameHint.closest(to: key, in: keys).map { " (did you mean '\($0)'?)" } ?? ""
                throw CLIError.usage("unknown sort key '\(key)'\(hint); use \(keys.joined(separator: ", "))")
            }
            return (key, descending)
        }
    }
}
