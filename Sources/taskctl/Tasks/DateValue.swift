import Foundation
import ObjectStore

/// A date given for one of a task's fields: a date (`friday`, `2026-12-01`), or one of the
/// task's own dates moved by durations, as Taskwarrior reads `due:due+1d` or `wait:due-2d`
/// (Taskwarrior's fixed lengths: a month is 30 days). Relative ones are read per task,
/// from its values as the command has set them so far.
enum DateValue {
    case fixed(Date)
    case relative(field: String, name: String, offset: TimeInterval)

    /// The task's date fields by Taskwarrior's names.
    static let fields = ["due": "dueDate", "wait": "waitUntil", "scheduled": "scheduled", "until": "until",
                         "entry": "createdAt", "start": "startedAt", "end": "completedAt"]

    /// `start`: a day without a time is that day's start (wait, scheduled), not its end.
    static func parse(_ text: String, start: Bool, app: App) throws -> DateValue {
        let lower = text.lowercased()
        if let name = fields.keys.sorted(by: { $0.count > $1.count }).first(where: { lower.hasPrefix($0) }) {
            let rest = lower.dropFirst(name.count)
            if rest.isEmpty || rest.first == "+" || rest.first == "-" {
                var offset = 0.0
                var remaining = Substring(rest)
                while let sign = remaining.first {
                    let body = remaining.dropFirst()
                    let end = body.firstIndex(where: { $0 == "+" || $0 == "-" }) ?? body.endIndex
                    guard let seconds = FilterValue.seconds(body[..<end]) else {
                        throw CLIError.usage("'\(text)': '\(body[..<end])' is not a duration (3d, 2w, 1mo, 4h, P1D)")
                    }
                    offset += sign == "+" ? seconds : -seconds
                    remaining = body[end...]
                }
                return .relative(field: fields[name] ?? name, name: name, offset: offset)
            }
        }
        return .fixed(start ? try app.parseStartDate(text) : try app.parseDate(text))
    }

    /// The date for `task` (a relative one needs the task's field set).
    func date(for task: ManagedObject) throws -> Date {
        switch self {
        case .fixed(let date): return date
        case .relative(let field, let name, let offset):
            guard case .date(let base) = task[field] else {
                throw CLIError.usage("task \(task.objectID.primaryKey ?? 0) has no \(name) date for '\(name)\(offset == 0 ? "" : "...")' to count from; nothing changed")
            }
            return base.addingTimeInterval(offset)
        }
    }
}
