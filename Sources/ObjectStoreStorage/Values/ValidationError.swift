import ObjectStoreModel

/// One broken rule found when saving: which object, which key, what value, which rule.
public struct ValidationFailure: Sendable, Hashable, CustomStringConvertible {
    /// The object that broke the rule.
    public var objectID: ObjectID
    /// The object's entity.
    public var entityName: String
    /// The property, or `nil` for a whole-object rule.
    public var key: String?
    /// The offending value, for attributes.
    public var value: Value?
    /// The rule broken.
    public var rule: ValidationRules.Rule
    /// A sentence a person can act on.
    public var message: String

    public var description: String {
        "\(entityName)\(key.map { "." + $0 } ?? ""): \(message)"
    }

    package init(objectID: ObjectID, entityName: String, key: String?, value: Value?, rule: ValidationRules.Rule, message: String) {
        self.objectID = objectID
        self.entityName = entityName
        self.key = key
        self.value = value
        self.rule = rule
        self.message = message
    }
}

/// A save refused because objects broke validation rules. Carries every failure of the
/// save, not just the first; nothing was written and the context keeps its changes.
///
/// ```swift
/// do { try context.save() } catch let error as ValidationError {
///     for failure in error.failures { print(failure) }   // Task.text: is required
/// }
/// ```
public struct ValidationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Every broken rule of the save.
    public var failures: [ValidationFailure]

    public var description: String {
        "validation failed:\n" + failures.map { "  " + $0.description }.joined(separator: "\n")
    }

    package init(failures: [ValidationFailure]) {
        self.failures = failures
    }
}

/// A message thrown from a custom validation hook.
///
/// ```swift
/// override func validateForSave() throws {
///     if self["priority"] == 3 && self["dueDate"].isNull {
///         throw ValidationMessage("a high-priority task needs a due date")
///     }
/// }
/// ```
public struct ValidationMessage: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    /// A failure with this message.
    public init(_ message: String) { self.description = message }
}
