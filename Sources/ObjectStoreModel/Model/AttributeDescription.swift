import Foundation

/// An attribute of an entity: a typed value with an optional default and validation rules.
///
/// Attributes are declared in a schema file and read with ``ManagedObjectModel``; the
/// description is an immutable value.
public struct AttributeDescription: Sendable, Hashable {
    /// The property name, unique within the entity and its ancestors.
    public var name: String
    /// The type of the attribute's values.
    public var type: AttributeType
    /// Whether the attribute may be nil when saved (schema default: `true`).
    public var isOptional: Bool = true
    /// Whether the value lives only in memory and is never written to a store.
    public var isTransient: Bool = false
    /// The value a newly inserted object starts with (``Value/null`` when there is none).
    public var defaultValue: Value = .null
    /// The rules checked when an object is saved.
    public var validation: ValidationRules = ValidationRules()
    /// For a derived attribute, the expression (in the predicate language) that computes it.
    /// Derived attributes are read-only and never stored.
    public var derivation: String?
    /// The name of this attribute in an earlier model version, for inferred migrations.
    public var renamingIdentifier: String?
    /// Folded into the version hash to mark a change the hash would not otherwise see.
    public var versionHashModifier: String?
    /// Free-form key/value strings for the application.
    public var userInfo: [String: String] = [:]
    /// Whether uniqueness constraints compare this (string) attribute ignoring case, so
    /// "Home" and "home" are one value (schema: `"collation": "caseInsensitive"`). It does
    /// not change what is stored, so it is not part of the version hash.
    public var isCaseInsensitive: Bool = false
    /// Whether a deleted object's value of this attribute is kept in the store's history as
    /// part of its tombstone (schema: `"preserveValueOnDeletion": true`, Core Data's option
    /// of the same name). It does not change what is stored, so it is not part of the
    /// version hash.
    public var preservesValueOnDeletion: Bool = false
    /// For a transformable attribute (schema: `"type": "transformable", "transformer": "NAME"`),
    /// the name of the transformer, registered in code, that turns its values into the bytes
    /// stored and back; ``type`` is then `binary`. Part of the version hash.
    public var valueTransformerName: String?
    /// The Swift type the model plugin gives the attribute's typed property (schema:
    /// `"swiftType": "Settings"`): the application's Codable or transformable type, or an enum
    /// with raw values. Values are stored as ``type`` says, so it is not part of the version hash.
    public var swiftTypeName: String?
    /// The enum the model plugin makes for the attribute (schema: `"enum"`), with its cases
    /// and their stored values, in order; nil when it has none. The values are the
    /// attribute's allowed values. Not part of the version hash.
    public var enumeration: Enumeration?

    /// A Swift enum with raw values for a string or integer attribute.
    public struct Enumeration: Sendable, Hashable {
        /// The enum's name.
        public var name: String
        /// Each case's name and stored value, in order.
        public var cases: [(name: String, value: Value)] {
            get { zip(caseNames, caseValues).map { ($0, $1) } }
            set {
                caseNames = newValue.map(\.name)
                caseValues = newValue.map(\.value)
            }
        }
        private var caseNames: [String] = []
        private var caseValues: [Value] = []

        /// An enum of these cases.
        public init(name: String, cases: [(name: String, value: Value)]) {
            self.name = name
            self.cases = cases
        }
    }

    /// An optional, stored attribute without default or rules.
    public init(name: String, type: AttributeType) {
        self.name = name
        self.type = type
    }

    /// Whether the value is computed from ``derivation`` rather than set.
    public var isDerived: Bool { derivation != nil }

    /// Whether values of this attribute are written to stores.
    public var isStored: Bool { !isTransient && !isDerived }

    /// The value uniqueness constraints compare: the value itself, or for a case-insensitive
    /// attribute its case-folded text.
    public func uniquenessValue(_ value: Value) -> Value {
        guard isCaseInsensitive, case .string(let text) = value else { return value }
        return .string(text.folding(options: [.caseInsensitive], locale: nil))
    }
}

/// Validation rules of an attribute, checked at save (and against the default when a model
/// is loaded).
public struct ValidationRules: Sendable, Hashable {
    /// The smallest allowed value (numbers and dates).
    public var minimum: Value?
    /// The largest allowed value (numbers and dates).
    public var maximum: Value?
    /// The fewest characters (strings) or bytes (binary).
    public var minLength: Int?
    /// The most characters (strings) or bytes (binary).
    public var maxLength: Int?
    /// A regular expression (ICU syntax, as `NSRegularExpression`) the whole string must match.
    public var pattern: String?
    /// The only values allowed, when set.
    public var allowedValues: [Value]?

    /// No rules.
    public init() {}

    /// Whether no rule is set.
    public var isEmpty: Bool {
        minimum == nil && maximum == nil && minLength == nil && maxLength == nil && pattern == nil && allowedValues == nil
    }

    /// Checks a non-nil value against every rule and returns one failure per broken rule.
    ///
    /// Null values pass: whether an attribute may be nil is its optionality, checked by the
    /// caller. An invalid ``pattern`` is reported as a failure rather than trapping (a loaded
    /// model never has one).
    public func failures(for value: Value) -> [RuleFailure] {
        failures(for: value, clock: MatchClock())
    }

    /// The broken rules of a value, the pattern matched within what is left of `clock` (one
    /// save shares one clock).
    package func failures(for value: Value, clock: MatchClock) -> [RuleFailure] {
        if value.isNull { return [] }
        var failures: [RuleFailure] = []
        if let minimum, let order = value.compare(to: minimum), order == .orderedAscending {
            failures.append(RuleFailure(rule: .minimum, message: "\(value) is less than the minimum \(minimum)"))
        }
        if let maximum, let order = value.compare(to: maximum), order == .orderedDescending {
            failures.append(RuleFailure(rule: .maximum, message: "\(value) is greater than the maximum \(maximum)"))
        }
        // Counting a string's characters walks it: only when a length rule asks.
        var length: Int?
        if minLength != nil || maxLength != nil {
            switch value {
            case .string(let s): length = s.count
            case .data(let d): length = d.count
            default: length = nil
            }
        }
        var unit: String { value.typeName == "string" ? "characters" : "bytes" }
        if let length, let minLength, length < minLength {
            failures.append(RuleFailure(rule: .minLength, message: "has \(length) \(unit), at least \(minLength) required"))
        }
        if let length, let maxLength, length > maxLength {
            failures.append(RuleFailure(rule: .maxLength, message: "has \(length) \(unit), at most \(maxLength) allowed"))
        }
        if let pattern, case .string(let s) = value {
            if let regex = try? NSRegularExpression(pattern: "^(?:" + pattern + ")$") {
                switch clock.wholeMatch(regex, s) {
                case .matched(true): break
                case .matched(false):
                    failures.append(RuleFailure(rule: .pattern, message: "\(value) does not match the pattern \(pattern)"))
                case .valueTooSlow:
                    failures.append(RuleFailure(rule: .pattern, message: "matching the pattern \(pattern) took more than \(Int(clock.perValue * 1000)) ms (\(s.count) characters); a pattern with nested repetition such as (a+)+ backtracks without end"))
                case .totalTooSlow:
                    failures.append(RuleFailure(rule: .pattern, message: "not checked against the pattern \(pattern): this save's patterns took \(clock.spent / 1_000_000) ms for \(clock.values) values, more than 1 s and 1 ms a value"))
                }
            } else {
                failures.append(RuleFailure(rule: .pattern, message: "the pattern \(pattern) is not a valid regular expression"))
            }
        }
        if let allowedValues, !allowedValues.contains(where: { $0.compare(to: value) == .orderedSame || $0 == value }) {
            let list = allowedValues.map(\.description).joined(separator: ", ")
            failures.append(RuleFailure(rule: .allowedValues, message: "\(value) is not one of the allowed values (\(list))"))
        }
        return failures
    }

    /// One broken rule.
    public struct RuleFailure: Sendable, Hashable {
        /// Which rule.
        public var rule: Rule
        /// What is wrong, for a person.
        public var message: String
    }

    /// The kinds of rule, named as in schema files.
    public enum Rule: String, Sendable, Hashable {
        /// A number or date below `min`, or above `max`.
        case minimum = "min", maximum = "max"
        /// A string shorter than `minLength`, or longer than `maxLength`.
        case minLength, maxLength
        /// A string the `pattern` does not match, or a value not among `allowedValues`.
        case pattern, allowedValues
        /// A required value or relationship missing.
        case required
        /// A to-many relationship with fewer objects than `minCount`, or more than `maxCount`.
        case minCount, maxCount
        /// A value a uniqueness constraint's other object already has.
        case unique
        /// A deletion the `deny` delete rule refuses.
        case deny
        /// A save that would leave a relationship pointing at a deleted object: a link to an
        /// object another save deleted since this one read it, or the deletion of an object
        /// another save linked to since (found by the store under its lock; nothing is
        /// written). Saving again from fresh state (a new context) resolves it.
        case danglingReference
        /// A rule of the program's own (`validateForSave`, a `ValidationMessage`).
        case custom
    }
}

/// Whole-string regular expression matching with `NSRegularExpression` (ICU syntax, as Core
/// Data's `MATCHES`).
package enum RegularExpressionCheck {
    /// Whether `pattern` compiles.
    public static func isValid(_ pattern: String) -> Bool {
        (try? NSRegularExpression(pattern: pattern)) != nil
    }

    /// Whether `regex` matches all of `string`, giving up after `budget` seconds (a pattern
    /// such as `(a+)+b` backtracks for seconds on a few dozen characters): `nil` then.
    public static func wholeMatch(_ regex: NSRegularExpression, _ string: String, budget: TimeInterval) -> Bool? {
        let range = NSRange(string.startIndex..<string.endIndex, in: string)
        let start = DispatchTime.now().uptimeNanoseconds
        let limit = UInt64(max(0, budget) * 1_000_000_000)
        var result: Bool? = false
        regex.enumerateMatches(in: string, options: [.anchored, .reportProgress], range: range) { match, _, stop in
            if let match {
                result = match.range == range
                stop.pointee = true
            } else if DispatchTime.now().uptimeNanoseconds - start > limit {
                result = nil
                stop.pointee = true
            }
        }
        return result
    }

    /// Whether `pattern` matches all of `string`; `nil` when the pattern does not compile.
    public static func wholeMatch(_ pattern: String, _ string: String, caseInsensitive: Bool = false) -> Bool? {
        guard let regex = try? NSRegularExpression(pattern: "^(?:" + pattern + ")$", options: caseInsensitive ? [.caseInsensitive] : []) else {
            return nil
        }
        let range = NSRange(string.startIndex..<string.endIndex, in: string)
        return regex.firstMatch(in: string, options: [.anchored], range: range) != nil
    }
}

/// The time regular expressions may take in one query or one save: each value at most
/// ``perValue``, and all of them together at most ``allowance`` plus ``perValueOnAverage``
/// for each value matched. A pattern with nested repetition (`(a+)+b`) backtracks for
/// seconds on a few dozen characters; bounding only each value let 500 values just under
/// the bound take 30 s. The average keeps a query or save of a million ordinary values (a
/// few microseconds each) from being cut short.
package final class MatchClock {
    /// What one value may take, in seconds.
    package let perValue: TimeInterval
    /// What every value may take together beyond the average, in seconds.
    package let allowance: TimeInterval
    /// What a value may take on average, in seconds.
    package let perValueOnAverage: TimeInterval
    /// Nanoseconds spent so far.
    package private(set) var spent: UInt64 = 0
    /// Values matched so far.
    package private(set) var values = 0

    /// The bounds MATCHES and schema patterns use: 100 ms a value; 1 s plus 1 ms a value
    /// for a query or a save.
    package init(perValue: TimeInterval = 0.1, allowance: TimeInterval = 1, perValueOnAverage: TimeInterval = 0.001) {
        self.perValue = perValue
        self.allowance = allowance
        self.perValueOnAverage = perValueOnAverage
    }

    /// The time all values matched so far may take, in seconds.
    package var total: TimeInterval { allowance + perValueOnAverage * Double(values) }

    /// What a match came to.
    package enum Outcome: Equatable {
        case matched(Bool)
        /// This value alone took more than ``perValue``.
        case valueTooSlow
        /// The query or save has spent its ``total``.
        case totalTooSlow
    }

    /// Whether `regex` matches all of `string`, within what is left of the time.
    package func wholeMatch(_ regex: NSRegularExpression, _ string: String) -> Outcome {
        let limit = UInt64(max(0, total + perValueOnAverage) * 1_000_000_000)
        guard spent < limit else { return .totalTooSlow }
        let left = Double(limit - spent) / 1_000_000_000
        let start = DispatchTime.now().uptimeNanoseconds
        let result = RegularExpressionCheck.wholeMatch(regex, string, budget: min(perValue, left))
        spent += DispatchTime.now().uptimeNanoseconds - start
        values += 1
        switch result {
        case .some(let matched): return .matched(matched)
        case .none: return left < perValue ? .totalTooSlow : .valueTooSlow
        }
    }
}
