import Foundation
import ObjectStore
import ObjectStoreModel

/// Taskwarrior 2.6's virtual tags (task(1), "VIRTUAL TAGS"; `Task::hasTag`): words such as
/// `+OVERDUE` that test a task's state rather than its tags. Each compiles to a predicate
/// with Taskwarrior's meaning; an upper-case tag that is not one of them is refused, as
/// Taskwarrior reserves those names.
enum VirtualTags {
    /// Every name, as `taskctl help filters` lists them.
    static let names = ["ACTIVE", "ANNOTATED", "BLOCKED", "BLOCKING", "CHILD", "COMPLETED", "DELETED", "DUE", "DUETODAY", "INSTANCE",
                        "LATEST", "MONTH", "ORPHAN", "OVERDUE", "PARENT", "PENDING", "PRIORITY", "PROJECT", "QUARTER", "READY",
                        "SCHEDULED", "TAGGED", "TEMPLATE", "TODAY", "TOMORROW", "UDA", "UNBLOCKED", "UNTIL", "WAITING", "WEEK",
                        "YEAR", "YESTERDAY"]

    /// Whether a tag name is reserved: it has letters and none of them is lower case.
    static func isReserved(_ name: String) -> Bool {
        name.contains(where: \.isLetter) && !name.contains(where: \.isLowercase)
    }

    /// Refuses a reserved name as a tag to add or remove.
    static func checkStorable(_ name: String) throws {
        guard isReserved(name) else { return }
        throw CLIError.usage(names.contains(name)
            ? "+\(name) is one of Taskwarrior's virtual tags (a task's state); it cannot be added or removed"
            : "'\(name)': upper-case tags are reserved for Taskwarrior's virtual tags, and \(name) is not one (see taskctl help filters); use lower case")
    }

    static func open(_ pending: ObjectPredicate) -> ObjectPredicate {
        .or(pending, .comparison(PredicateComparison(.keyPath(.evaluatedObject, ["status"]), .equal, .constant(.string("recurring")))))
    }
}
