import Foundation
import ObjectStore
import ObjectStoreModel

/// Taskwarrior's urgency (2.6): a sum of weighted terms, each between 0 and 1 (due: 0.2 to
/// 1), so reports sort by what needs doing first. The weights are Taskwarrior's settings of
/// the same names (`urgency.due.coefficient`, `urgency.user.tag.NAME.coefficient`, ...), with
/// its defaults. Computed as Taskwarrior computes it (single-precision, its order of terms,
/// age in whole days), so two tasks it ranks equal are equal here too and ties break alike.
struct UrgencyCoefficients: Sendable {
    var project: Float = 1, active: Float = 4, scheduled: Float = 5, waiting: Float = -3, blocked: Float = -5
    var annotations: Float = 1, tags: Float = 1, due: Float = 12, blocking: Float = 8, age: Float = 2
    /// `urgency.age.max`: the age in days that counts in full (0: any age does).
    var ageMaximumDays: Double = 365
    /// The per-name coefficients (`urgency.user.tag.next.coefficient`,
    /// `urgency.uda.priority.H.coefficient`, ...) by their setting's name, added in that
    /// name's order, as Taskwarrior adds them.
    var named: [String: Float] = ["urgency.user.tag.next.coefficient": 15, "urgency.uda.priority.H.coefficient": 6,
                                  "urgency.uda.priority.M.coefficient": 3.9, "urgency.uda.priority.L.coefficient": 1.8]

    static let standard = UrgencyCoefficients()

    /// A per-name coefficient, read once from its setting's name.
    struct Rule: Sendable {
        let kind: String, name: String, value: String?, coefficient: Float
        /// What the rule tests, worked out once (a list tests every rule on every task:
        /// comparing the kind's text and making the priority's letter per task was a
        /// twentieth of `list`).
        let test: Test

        enum Test: Sendable {
            case tag(String)
            /// The project or one under it (`name.`).
            case project(String, under: String)
            case keyword(String)
            /// Priority `H`, `M` or `L` (`code`: the stored number whose letter it is; nil
            /// for another value, compared with the letter), or any priority (`value` nil).
            case priority(code: Int64?, value: String?)
            case attribute(String, value: String?)
        }

        init(kind: String, name: String, value: String?, coefficient: Float) {
            self.kind = kind
            self.name = name
            self.value = value
            self.coefficient = coefficient
            switch kind {
            case "tag": test = .tag(name)
            case "project": test = .project(name, under: name + ".")
            case "keyword": test = .keyword(name)
            default:
                if name == "priority" {
                    test = .priority(code: value.flatMap { value in Priority.letters.firstIndex(of: value).flatMap { $0 > 0 ? Int64($0) : nil } }, value: value)
                } else {
                    test = .attribute(name, value: value)
                }
            }
        }
    }

    /// The per-name coefficients as rules, in the order Taskwarrior adds them (by the
    /// setting's name); those of 0 left out.
    var rules: [Rule] {
        named.sorted { $0.key < $1.key }.compactMap { key, coefficient in
            guard abs(coefficient) > 0.000001, let (kind, name, value) = Self.named(key) else { return nil }
            return Rule(kind: kind, name: name, value: value, coefficient: coefficient)
        }
    }

    /// The fixed terms' settings.
    static let termKeys = ["project", "active", "scheduled", "waiting", "blocked", "annotations", "tags", "due", "blocking", "age"]

    /// Whether `key` is one of the urgency settings.
    static func isSetting(_ key: String) -> Bool {
        guard key.hasPrefix("urgency.") else { return false }
        if key == "urgency.age.max" || key == "urgency.inherit" { return true }
        if termKeys.contains(where: { key == "urgency.\($0).coefficient" }) { return true }
        return named(key) != nil
    }

    /// A per-name setting's parts: (kind, name, value) for `urgency.user.tag.NAME.coefficient`
    /// (kind tag), `.project.`, `.keyword.`, `urgency.uda.NAME.coefficient` (uda, value nil)
    /// and `urgency.uda.NAME.VALUE.coefficient`.
    static func named(_ key: String) -> (kind: String, name: String, value: String?)? {
        guard key.hasSuffix(".coefficient") else { return nil }
        let body = key.dropLast(".coefficient".count)
        for kind in ["tag", "project", "keyword"] where body.hasPrefix("urgency.user.\(kind).") {
            let name = String(body.dropFirst("urgency.user.\(kind).".count))
            return name.isEmpty ? nil : (kind, name, nil)
        }
        guard body.hasPrefix("urgency.uda.") else { return nil }
        let rest = body.dropFirst("urgency.uda.".count)
        guard !rest.isEmpty else { return nil }
        if let dot = rest.firstIndex(of: ".") {
            return ("uda", String(rest[..<dot]), String(rest[rest.index(after: dot)...]))
        }
        return ("uda", String(rest), nil)
    }

    /// Sets one urgency setting; `place` locates an error.
    mutating func set(_ key: String, to text: String, at place: String) throws {
        if key == "urgency.inherit" {
            // Taskwarrior's default is off; taskctl does not raise a blocker to its blocked
            // tasks' urgency (yet), and says so rather than ignore the setting.
            guard ["0", "no", "off", "false", "n"].contains(text.lowercased()) else {
                throw CLIError.usage("\(place): urgency.inherit is not supported by taskctl (only 0, Taskwarrior's default)")
            }
            return
        }
        guard let number = Double(text), number.isFinite else { throw CLIError.usage("\(place): \(key) takes a number, not '\(text)'") }
        if key == "urgency.age.max" {
            guard number >= 0 else { throw CLIError.usage("\(place): urgency.age.max takes a number of days (0 or more), not '\(text)'") }
            ageMaximumDays = number
            return
        }
        let value = Float(number)
        switch key {
        case "urgency.project.coefficient": project = value
        case "urgency.active.coefficient": active = value
        case "urgency.scheduled.coefficient": scheduled = value
        case "urgency.waiting.coefficient": waiting = value
        case "urgency.blocked.coefficient": blocked = value
        case "urgency.annotations.coefficient": annotations = value
        case "urgency.tags.coefficient": tags = value
        case "urgency.due.coefficient": due = value
        case "urgency.blocking.coefficient": blocking = value
        case "urgency.age.coefficient": age = value
        default: named[key] = value
        }
    }
}

enum Urgency {
    /// An open task's urgency (pending, or a recurrence template); `blocked` and `blocking` come from the other tasks (``DependencyIndex``),
    /// `userValues` are its user-defined attributes' values as text.
    static func of(_ view: TaskView, now: Date, coefficients c: UrgencyCoefficients, blocked: Bool, blocking: Bool,
                   userValues: [String: String] = [:]) -> Double {
        of(view, now: now, coefficients: c, rules: c.rules, blocked: blocked, blocking: blocking, userValues: userValues)
    }

    /// As above, with the per-name rules read already (a list reads them once, not per task).
    static func of(_ view: TaskView, now: Date, coefficients c: UrgencyCoefficients, rules: [UrgencyCoefficients.Rule], blocked: Bool, blocking: Bool,
                   userValues: [String: String] = [:]) -> Double {
        // taskctl's choice: a done or deleted task needs nothing done, so its urgency is 0
        // (Taskwarrior computes one for it too, which no report of it shows).
        guard view.status != "done" && view.status != "deleted" else { return 0 }
        var total: Float = 0
        // Taskwarrior adds each product as a double to its float total.
        func add(_ term: Float, _ coefficient: Float) {
            guard abs(coefficient) > 0.000001 else { return }
            total = Float(Double(total) + Double(term * coefficient))
        }
        add(view.project != nil ? 1 : 0, c.project)
        add(view.started != nil ? 1 : 0, c.active)
        add(view.scheduled.map { $0 < now } == true ? 1 : 0, c.scheduled)
        add(view.isWaiting(at: now) ? 1 : 0, c.waiting)
        add(blocked ? 1 : 0, c.blocked)
        add(countTerm(view.annotations.count), c.annotations)
        add(countTerm(view.tags.count), c.tags)
        if let dueDate = view.due {
            // Seven days overdue or more: 1; from 14 days ahead to 7 overdue: 0.2 to 1.
            let overdueDays = Float(now.timeIntervalSince(dueDate).rounded(.towardZero) / 86_400)
            let term: Float = overdueDays >= 7 ? 1 : overdueDays >= -14 ? Float((Double(overdueDays) + 14) * 0.8 / 21 + 0.2) : 0.2
            add(term, c.due)
        }
        add(blocking ? 1 : 0, c.blocking)
        if let created = view.created {
            // Whole days, as Taskwarrior counts them.
            let days = Double(Int64(now.timeIntervalSince(created).rounded(.towardZero)) / 86_400)
            add(c.ageMaximumDays == 0 || days > c.ageMaximumDays ? 1 : Float(days / c.ageMaximumDays), c.age)
        } else {
            add(0, c.age)
        }
        for rule in rules {
            let applies: Bool
            switch rule.test {
            case .tag(let name): applies = view.tags.contains(name)
            case .project(let name, let under): applies = view.project.map { $0 == name || $0.hasPrefix(under) } ?? false
            case .keyword(let word): applies = view.text.contains(word)
            case .priority(let code, let value):
                // The stored priority's letter, or a value kept among the task's fields.
                if view.priority > 0 {
                    if let code { applies = view.priority == code } else { applies = value.map { Priority.letter(view.priority) == $0 } ?? true }
                } else {
                    let kept = userValues["priority"]
                    applies = value.map { kept == $0 } ?? (kept != nil)
                }
            case .attribute(let name, let value):
                let current = userValues[name]
                applies = value.map { current == $0 } ?? (current != nil)
            }
            if applies { total += rule.coefficient }
        }
        return Double(total)
    }

    /// Tags and annotations: 0.8 for one, 0.9 for two, 1 for more.
    private static func countTerm(_ count: Int) -> Float {
        switch count {
        case 0: return 0
        case 1: return 0.8
        case 2: return 0.9
        default: return 1
        }
    }

    /// Three decimals, as Taskwarrior shows it.
    /// (`%.0f` for a whole number, `%g` otherwise; written here without `String(format:)`,
    /// a sixth of `export`'s time, where the digits are exact: under 100 in size, as
    /// urgencies are, three decimals are at most five significant digits, fewer than `%g`'s
    /// six, so `%g` writes them all.)
    static func text(_ value: Double) -> String {
        let rounded = (value * 1000).rounded() / 1000
        if rounded == rounded.rounded() {
            if rounded == 0 { return rounded.sign == .minus ? "-0" : "0" }
            if abs(rounded) < 1e15 { return String(Int(rounded)) }
            return String(format: "%.0f", rounded)
        }
        let thousandths = Int((rounded * 1000).rounded())
        guard abs(thousandths) < 100_000 else { return String(format: "%g", rounded) }
        var fraction = abs(thousandths) % 1000, digits = 3
        while fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        let fractionText = String(fraction)
        return (thousandths < 0 ? "-" : "") + String(abs(thousandths) / 1000) + "."
            + String(repeating: "0", count: digits - fractionText.count) + fractionText
    }
}

/// Urgency for one command: the settings' coefficients and which tasks are blocked or
/// blocking, read from the store once (when first needed) and read again after a save.
final class UrgencyScorer {
    let coefficients: UrgencyCoefficients
    let now: Date
    private var index: DependencyIndex? {
        didSet { anyBlocking = !(index?.blocking.isEmpty ?? true) }
    }
    /// Whether the index read lists a blocking task (kept with it, so a task's score need
    /// not look into the index's sets).
    private var anyBlocking = false
    private let rules: [UrgencyCoefficients.Rule]
    /// Whether a coefficient names a user-defined attribute, or a priority other than H, M
    /// and L (kept as written): only then are a task's kept fields read.
    private let readsKeptFields: Bool

    init(coefficients: UrgencyCoefficients, now: Date) {
        self.coefficients = coefficients
        self.now = now
        rules = coefficients.rules
        readsKeptFields = rules.contains { rule in
            rule.kind == "uda" && (rule.name != "priority" || !["H", "M", "L"].contains(rule.value ?? ""))
        }
    }

    /// The view's urgency; `context` is where its task was read.
    func score(_ view: TaskView, context: ManagedObjectContext?) throws -> Double {
        // The context is bound only until the index is read: a context is weakly referenced
        // (by its objects), so each retain of it takes the runtime's slow path.
        if index == nil, let context { _ = try dependencyIndex(context) }
        var blocked = false, blocking = false
        // Without blocking tasks (most stores) no set is touched.
        if anyBlocking, let index, let uuid = view.uuidValue {
            blocked = index.blocked.contains(uuid)
            blocking = index.blocking.contains(uuid)
        }
        guard readsKeptFields, let extras = view.extrasText else {
            return Urgency.of(view, now: now, coefficients: coefficients, rules: rules, blocked: blocked, blocking: blocking)
        }
        var values: [String: String] = [:]
        for (key, json) in ExtrasText.decode(.string(extras)) { values[key] = UserAttribute.text(ofJSON: json) }
        return Urgency.of(view, now: now, coefficients: coefficients, rules: rules, blocked: blocked, blocking: blocking, userValues: values)
    }

    func dependencyIndex(_ context: ManagedObjectContext) throws -> DependencyIndex {
        if let index { return index }
        let made = try DependencyIndex(context)
        index = made
        return made
    }

    /// Forgets what was read: the store changed.
    func invalidate() { index = nil }
}
