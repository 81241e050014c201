import ObjectStore
import ObjectStoreModel
import ObjectStoreSync

/// A failure taskctl reports: one or two lines on stderr and an exit status (1 for usage and
/// validation, 2 for store problems, 3 for a sync that could not reach or use its server).
struct CLIError: Error {
    var message: String
    var status: Int32

    static func usage(_ message: String) -> CLIError { CLIError(message: message, status: 1) }
    static func store(_ message: String) -> CLIError { CLIError(message: message, status: 2) }
    /// A failed sync; credentials a server's URL carries are never shown.
    static func sync(_ message: String) -> CLIError { CLIError(message: Redaction.userinfo(in: message), status: 3) }

    /// Turns any error into what the user reads.
    static func from(_ error: any Error) -> CLIError {
        switch error {
        case let error as CLIError: return error
        case let error as StoreError:
            // A damaged row is never shown as an absent one: the command stops and says so.
            if case .corrupt = error { return .store(error.description + "\nrun taskctl store check to check the whole store; nothing was changed") }
            return .store(error.description)
        case let error as MigrationError: return .store("cannot migrate the store; it was left as it was: \(error)")
        case let error as SchemaError: return .store("the Tasks model does not load: \(error)")
        case let error as StoreConflictError: return .store("\(error)\nanother taskctl saved the same task at the same time; run the command again")
        case let error as ValidationError:
            return .usage(error.failures.map { failure in
                // The field as the user knows it, and whose it is when not the task's own
                // (an annotation's text is not the task's text).
                let key = failure.key.map { displayName(ofKey: $0) } ?? "task"
                let owner = failure.entityName == "Task" ? "" : failure.entityName.lowercased() + " "
                return "\(owner)\(key): \(failure.message)"
            }.joined(separator: "\n"))
        default: return .usage("\(error)")
        }
    }

    static func displayName(ofKey key: String) -> String {
        switch key {
        case "title": return "text"
        case "dueDate": return "due"
        default: return key
        }
    }
}
