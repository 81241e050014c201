import Foundation
import ObjectStoreModel
import ObjectStoreStorage

/// An object of the model, tracked by a ``ManagedObjectContext``.
///
/// Objects are created by a context (``ManagedObjectContext/insertObject(entityName:)`` or
/// ``ManagedObjectContext/insert(_:)`` for a registered subclass), never directly. Values are
/// read and written by key, or through typed properties on a subclass (see ``Attribute``).
///
/// ```swift
/// let task = try context.insertObject(entityName: "Task")
/// try task.setValue("Buy milk", forKey: "text")
/// try task.setObject(home, forKey: "location")     // also adds task to home.tasks
/// try task.value(forKeyPath: "location.name")      // .value("Home")
/// ```
///
/// Subclasses may override the life-cycle hooks (``awakeFromInsert()``, ``awakeFromFetch()``,
/// ``willSave()``, ``didSave()``, ``prepareForDeletion()``) and the validation hooks
/// (``validate(_:forKey:)``, ``validateForSave()``).
open class ManagedObject {
    /// The object's entity.
    public let entity: EntityDescription
    /// The object's identity: temporary until saved, permanent afterwards.
    // Unchecked: it is only ever read or assigned whole, never passed inout, so no access
    // to it can overlap another; the runtime's check of each read was a fifth of a fetch
    // over registered objects (the registry compares the IDs of the objects it probes).
    @exclusivity(unchecked) public internal(set) var objectID: ObjectID
    // The flags fill the bytes the 17-byte ID leaves before the next word. With the two
    // 24-byte slot values and the rare fields boxed in `extras`, an object takes 120 bytes
    // (a Task of a 10k-task fetch, massif).
    @exclusivity(unchecked) var faultState: Bool = false
    @exclusivity(unchecked) var deletedState: Bool = false
    @exclusivity(unchecked) var insertedState: Bool = false
    /// What ``hasChangedSlots`` last found (0: not asked since the values last changed, 1:
    /// no change, 2: a change): a save asks it of every touched object several times, and
    /// each answer compares every slot with the row.
    private var changeVerdict: UInt8 = 0
    /// The context that tracks the object; `nil` once the context is gone or the object was
    /// removed from it.
    public internal(set) weak var managedObjectContext: ManagedObjectContext?

    /// Current values, one per slot; empty while the object is a fault. Read in place from
    /// the binary store's row until the first write.
    // Unchecked, as `objectID`: read or assigned whole, or changed a slot at a time by
    // code that reads nothing else of the object meanwhile; the runtime's check of a
    // fetch's read of each registered object's values was an eighth of the fetch.
    @exclusivity(unchecked) var slots = Slots() {
        didSet {
            changeVerdict = 0
            slotWrites &+= 1
        }
    }
    /// Writes of ``slots`` so far, and how many of them ``writtenSlots`` accounts for: when
    /// the two are equal, every slot written since the committed values were set (by a
    /// context's ``ManagedObjectContext/setSlot(_:_:_:)``) is in the mask, and only those
    /// can differ from the committed values.
    private var slotWrites: UInt32 = 0
    private var maskedWrites: UInt32 = 0
    private var writtenSlots: UInt64 = 0
    /// Saved values (as of the last load or save); `nil` for an object never saved. A fault
    /// a fetch made keeps the row it read here, so firing it costs no second read (Core
    /// Data's row cache): the object stays a fault, and `awakeFromFetch` runs, on first use.
    @exclusivity(unchecked) var committedSlots: Slots? {
        didSet {
            changeVerdict = 0
            writtenSlots = 0
            // The mask starts empty only when the values are the committed ones (a save, a
            // load); committed values set under other values (a merge) leave it unusable.
            if let committedSlots, slots.isSameStorage(as: committedSlots) {
                maskedWrites = slotWrites
            } else {
                maskedWrites = slotWrites &- 1
            }
        }
    }

    /// Makes the committed values the current ones, as assigning them to both would (a
    /// fault a fetch made firing on the row it kept), without assigning them again: that
    /// released and retained the row and compared the two storages, a sixth of reading one
    /// attribute of each of 2,000 fetched objects.
    func takeCommittedValues() {
        guard let committedSlots else { return }
        slots = committedSlots
        writtenSlots = 0
        maskedWrites = slotWrites
    }

    /// Notes that slot `index` was just written (the write's only effect on the values).
    func noteSlotWritten(_ index: Int) {
        guard maskedWrites &+ 1 == slotWrites, index < 64 else {
            maskedWrites = slotWrites &- 1  // never equal again until the next commit
            return
        }
        writtenSlots |= 1 << UInt64(index)
        maskedWrites = slotWrites
    }
    /// The row version the committed values come from.
    var committedVersion: Int64 = 0
    /// What few objects have, kept apart so the others do not carry it.
    private final class Extras {
        var fetchedPropertyCache: [String: [ObjectID]] = [:]
        var prefetched: [ManagedObject] = []
        var lastAccessError: (any Error)?
    }
    private var extras: Extras?
    private var madeExtras: Extras {
        if let extras { return extras }
        let made = Extras()
        extras = made
        return made
    }
    /// Cached fetched-property results, dropped when the object is refreshed.
    var fetchedPropertyCache: [String: [ObjectID]] {
        get { extras?.fetchedPropertyCache ?? [:] }
        set {
            if extras == nil && newValue.isEmpty { return }
            madeExtras.fetchedPropertyCache = newValue
        }
    }
    /// Objects prefetched through this object's relationships, kept alive with it.
    var prefetched: [ManagedObject] {
        get { extras?.prefetched ?? [] }
        set {
            if extras == nil && newValue.isEmpty { return }
            madeExtras.prefetched = newValue
        }
    }

    /// Made by contexts only. Subclasses that add stored properties must give them initial
    /// values and keep this initializer.
    public required init(entity: EntityDescription, objectID: ObjectID) {
        self.entity = entity
        self.objectID = objectID
    }

    // MARK: State

    /// Whether the object's values have not been loaded yet (they load on first access).
    public var isFault: Bool { faultState }
    /// Whether the object was inserted and not saved yet.
    public var isInserted: Bool { insertedState && !deletedState }
    /// Whether the object is marked for deletion at the next save (false again once the
    /// deletion is saved, as in Core Data).
    public var isDeleted: Bool { deletedState }
    /// Whether a saved object has unsaved changes to stored properties.
    public var isUpdated: Bool {
        !insertedState && !deletedState && !faultState && hasChangedSlots
    }
    /// Whether the object is inserted, updated or deleted.
    public var hasChanges: Bool { isInserted || isDeleted || isUpdated }

    /// Slot indices whose value differs from the committed one.
    var changedSlotIndices: [Int] {
        var changed: [Int] = []
        forEachChangedSlot { changed.append($0); return true }
        return changed
    }

    /// Whether a slot's value differs from the committed one: ``changedSlotIndices`` is not
    /// empty, found without listing them, and remembered until the values change (a save
    /// asks it of every touched object several times).
    var hasChangedSlots: Bool {
        guard !faultState else { return false }
        if changeVerdict != 0 { return changeVerdict == 2 }
        var changed = false
        forEachChangedSlot { _ in changed = true; return false }
        changeVerdict = changed ? 2 : 1
        return changed
    }

    /// Calls `body` with each slot index whose value differs from the committed one, in
    /// order, until it returns false.
    func forEachChangedSlot(_ body: (Int) -> Bool) {
        forEachChangedSlot { index, _ in body(index) }
    }

    /// Calls `body` with each slot index whose value differs from the committed one and
    /// that committed value (nil for a slot past the committed ones), in order, until it
    /// returns false: the committed row is read once.
    func forEachChangedSlot(_ body: (Int, SlotValue?) -> Bool) {
        guard !faultState else { return }
        guard let committed = committedSlots else {
            for index in slots.indices where !body(index, nil) { return }
            return
        }
        // Values still read from the row they were loaded from, or the very array saved,
        // were never written since.
        if changeVerdict == 1 || slots.isSameStorage(as: committed) { return }
        if maskedWrites == slotWrites {
            // Only the slots written since can differ: those are compared alone.
            var mask = writtenSlots
            while mask != 0 {
                let index = mask.trailingZeroBitCount
                mask &= mask &- 1
                guard index < slots.count else { break }
                let old = index < committed.count ? committed[index] : nil
                if old.map({ Self.differ(slots[index], $0) }) ?? true, !body(index, old) { return }
            }
            return
        }
        if let row = committed.row, !slots.isEncoded {
            // The row read once, in order (slot by slot it would skip the values before
            // each one again).
            var going = true
            row.forEachSlot { index, value in
                if index < slots.count, Self.differ(slots[index], value) { going = body(index, value) }
                return going
            }
            guard going else { return }
            for index in row.layout.count..<Swift.max(row.layout.count, slots.count) where !body(index, nil) { return }
            return
        }
        for index in slots.indices {
            if index >= committed.count {
                if !body(index, nil) { return }
                continue
            }
            let old = committed[index]
            if Self.differ(slots[index], old), !body(index, old) { return }
        }
    }

    /// Whether slot `index` differs from its committed value (compared alone: the others'
    /// values are not decoded).
    func slotChanged(_ index: Int) -> Bool {
        guard !faultState else { return false }
        guard let committed = committedSlots else { return index < slots.count }
        if changeVerdict == 1 || slots.isSameStorage(as: committed) { return false }
        guard index < committed.count else { return index < slots.count }
        return index < slots.count && Self.differ(slots[index], committed[index])
    }

    /// Whether a slot's value is a change from the committed one (two NaNs are not).
    private static func differ(_ a: SlotValue, _ b: SlotValue) -> Bool {
        guard a != b else { return false }
        if case .value(.double(let x)) = a, case .value(.double(let y)) = b { return !(x.isNaN && y.isNaN) }
        return true
    }

    // MARK: Hooks

    /// Called once when the object is inserted, after model defaults are applied: set runtime
    /// defaults here (say, a due date three days ahead).
    open func awakeFromInsert() {}
    /// Called when the object's values are first loaded from a store or parent context.
    open func awakeFromFetch() {}
    /// Called at save, before validation, for every inserted, updated and deleted object.
    open func willSave() {}
    /// Called after a successful save.
    open func didSave() {}
    /// Called when the object is deleted, before delete rules are applied.
    open func prepareForDeletion() {}

    /// Validates one property's value at save; throw to reject it (the error's description
    /// becomes the failure message). Model rules are checked separately.
    open func validate(_ value: Value, forKey key: String) throws {}
    /// Validates the whole object at save (inserted and updated objects); throw to reject,
    /// for example "a high-priority task needs a due date".
    open func validateForSave() throws {}

    // MARK: Reading

    /// Loads the object's values if it is a fault.
    func fireFault() throws {
        guard faultState else { return }
        guard let context = managedObjectContext else { throw ObjectStoreError.objectNotFound(objectID) }
        try context.fulfillFault(self)
    }

    /// Loads the object's values; false when its row was deleted elsewhere since it was
    /// listed (a fetch then leaves it out). Anything else, a damaged row above all, throws:
    /// a row that cannot be read is an error, never a row that is not there.
    func fireFaultUnlessDeleted() throws -> Bool {
        do {
            try fireFault()
            return true
        } catch ObjectStoreError.objectNotFound {
            return false
        }
    }

    func slotIndex(_ key: String) throws -> Int {
        guard let index = entity.slot(of: key) else {
            throw ObjectStoreError.unknownKey(entity: entity.name, key: key, suggestion: NameSuggestion.closest(to: key, in: entity.properties.map(\.name)))
        }
        return index
    }

    /// The value of an attribute (derived attributes are computed).
    ///
    /// - Throws: `ObjectStoreError.unknownKey(entity:key:suggestion:)`, or
    ///   `ObjectStoreError.objectNotFound(_:)` for a fault whose row was deleted elsewhere.
    public func value(forKey key: String) throws -> Value {
        try value(atSlot: try slotIndex(key))
    }

    /// The value of the attribute in a slot of the object's entity (its index in
    /// `EntityDescription.properties`, from `EntityDescription.slot(of:)`): for code that
    /// reads the same attributes of many objects, without looking each name up again. A
    /// slot found on an ancestor entity is valid for its sub-entities' objects.
    ///
    /// ```swift
    /// if let title = taskEntity.slot(of: "title") {
    ///     let titles = try tasks.map { try $0.value(atSlot: title) }
    /// }
    /// ```
    ///
    /// - Throws: `ObjectStoreError.unknownKey(entity:key:suggestion:)` for a slot the entity
    ///   does not have, `ObjectStoreError.wrongType(entity:key:expected:given:)` for a
    ///   relationship's slot, and as ``value(forKey:)`` otherwise.
    public func value(atSlot index: Int) throws -> Value {
        guard index >= 0, index < entity.slotCount else {
            throw ObjectStoreError.unknownKey(entity: entity.name, key: "slot \(index)", suggestion: nil)
        }
        switch entity.kind(ofSlot: index) {
        case .attribute:
            try fireFault()
            return slots[index].value
        case .derivedAttribute:
            return try DerivedAttributes.evaluate(of: self, slot: index)
        case .toOne, .toMany:
            let key = entity.properties[index].name
            throw ObjectStoreError.wrongType(entity: entity.name, key: key, expected: "an attribute key", given: "relationship '\(key)'; use object(forKey:) or objects(forKey:)")
        }
    }

    /// The value of an attribute, or `Value.null` for an unknown key or an object that
    /// can no longer be loaded. Use ``value(forKey:)`` to get those as errors.
    public subscript(key: String) -> Value {
        (try? value(forKey: key)) ?? .null
    }

    /// The destination of a to-one relationship.
    public func object(forKey key: String) throws -> ManagedObject? {
        let index = try slotIndex(key)
        guard entity.kind(ofSlot: index) == .toOne else {
            throw ObjectStoreError.wrongType(entity: entity.name, key: key, expected: "a to-one relationship key", given: "'\(key)'")
        }
        try fireFault()
        guard case .toOne(let id?) = slots[index] else { return nil }
        return try context().object(with: id)
    }

    /// The destinations of a to-many relationship (in order for an ordered one).
    public func objects(forKey key: String) throws -> [ManagedObject] {
        let index = try slotIndex(key)
        guard entity.kind(ofSlot: index) == .toMany else {
            throw ObjectStoreError.wrongType(entity: entity.name, key: key, expected: "a to-many relationship key", given: "'\(key)'")
        }
        try fireFault()
        let context = try context()
        return try context.referencedIDs(of: self, at: index).map { try context.object(with: $0) }
    }

    /// The IDs a relationship refers to, without loading the destination objects.
    public func objectIDs(forRelationship key: String) throws -> [ObjectID] {
        try objectIDs(atSlot: try slotIndex(key))
    }

    /// The IDs the relationship in a slot refers to (see ``value(atSlot:)``), without loading
    /// the destination objects.
    ///
    /// - Throws: `ObjectStoreError.unknownKey(entity:key:suggestion:)` for a slot the entity
    ///   does not have, `ObjectStoreError.wrongType(entity:key:expected:given:)` for an
    ///   attribute's slot.
    public func objectIDs(atSlot index: Int) throws -> [ObjectID] {
        guard index >= 0, index < entity.slotCount else {
            throw ObjectStoreError.unknownKey(entity: entity.name, key: "slot \(index)", suggestion: nil)
        }
        switch entity.kind(ofSlot: index) {
        case .toOne, .toMany: break
        case .attribute, .derivedAttribute:
            let key = entity.properties[index].name
            throw ObjectStoreError.wrongType(entity: entity.name, key: key, expected: "a relationship key", given: "attribute '\(key)'")
        }
        try fireFault()
        guard entity.kind(ofSlot: index) == .toMany else { return slots[index].referencedIDs }
        return try context().referencedIDs(of: self, at: index)
    }

    func context() throws -> ManagedObjectContext {
        guard let context = managedObjectContext else { throw ObjectStoreError.objectNotFound(objectID) }
        return context
    }

    // MARK: Writing

    /// Sets an attribute. Integers are accepted for double and decimal attributes, and
    /// doubles for decimal ones; anything else of the wrong type throws.
    ///
    /// - Throws: `ObjectStoreError.wrongType(entity:key:expected:given:)` naming entity, key,
    ///   expected and given type; `ObjectStoreError.readOnly(entity:key:)` for a derived
    ///   attribute.
    public func setValue(_ value: Value, forKey key: String) throws {
        let index = try slotIndex(key)
        switch entity.kind(ofSlot: index) {
        case .attribute: break
        case .derivedAttribute: throw ObjectStoreError.readOnly(entity: entity.name, key: key)
        case .toOne, .toMany:
            throw ObjectStoreError.wrongType(entity: entity.name, key: key, expected: "an attribute key", given: "relationship '\(key)'; use setObject(_:forKey:) or setObjects(_:forKey:)")
        }
        // A value of the attribute's type as it is; others converted (or refused) by the
        // attribute's description, copied only then.
        if let type = entity.attributeType(ofSlot: index), value.fits(type) {
            try context().setSlot(self, index, .value(value))
        } else if let attribute = entity.properties[index].attribute {
            try context().setSlot(self, index, .value(try Self.coerce(value, to: attribute, entity: entity.name)))
        }
    }

    static func coerce(_ value: Value, to attribute: AttributeDescription, entity: String) throws -> Value {
        if value.fits(attribute.type) { return value }
        switch (value, attribute.type) {
        case (.integer(let i), .double), (.integer(let i), .float): return .double(Double(i))
        case (.integer(let i), .decimal): return .decimal(Decimal(i))
        case (.double(let d), .decimal) where d.isFinite: return .decimal(Decimal(d))
        default:
            let given: String
            if case .integer(let i) = value, attribute.type.isInteger { given = "\(i), out of range" } else { given = "a \(value.typeName) (\(value))" }
            throw ObjectStoreError.wrongType(entity: entity, key: attribute.name, expected: attribute.type.rawValue, given: given)
        }
    }

    /// Sets a to-one relationship, maintaining the inverse on both the old and new
    /// destination.
    public func setObject(_ object: ManagedObject?, forKey key: String) throws {
        let relationship = try relationshipForWriting(key, toMany: false)
        let context = try context()
        try fireFault()
        if let object {
            try checkDestination(object, relationship)
            try context.relate(self, relationship, object)
        } else if case .toOne(let id?) = slots[try slotIndex(key)] {
            try context.unrelate(self, relationship, try context.object(with: id))
        }
    }

    /// Replaces the destinations of a to-many relationship (in this order, for an ordered
    /// one), maintaining inverses.
    public func setObjects(_ objects: [ManagedObject], forKey key: String) throws {
        let relationship = try relationshipForWriting(key, toMany: true)
        let context = try context()
        for object in objects { try checkDestination(object, relationship) }
        let index = try slotIndex(key)
        try fireFault()
        var wanted = Set<ObjectID>()
        let ordered = objects.map(\.objectID).filter { wanted.insert($0).inserted }
        let currentIDs = try context.referencedIDs(of: self, at: index)
        guard currentIDs != ordered else { return }
        // This side is written once; the other sides one object each, with sets for the
        // membership tests: a task given 100,000 tags stays linear (searching the list per
        // tag made an import of one such task take minutes).
        let current = Set(currentIDs)
        let inverse = context.inverse(of: relationship)
        if let inverse {
            for id in currentIDs where !wanted.contains(id) {
                let old = try context.object(with: id)
                // An object of another entity (a damaged store's) has no such inverse.
                guard old.entity.isKind(of: relationship.destinationEntityName) else { continue }
                try context.removeOneSide(old, inverse, self)
            }
        }
        // A side derived from its inverse is written through the inverse alone.
        if !relationship.isDerivedFromInverse { try context.setSlot(self, index, .toMany(ordered)) }
        if let inverse {
            var added = Set<ObjectID>()
            for object in objects where !current.contains(object.objectID) && added.insert(object.objectID).inserted {
                try context.addInverse(object, inverse, self)
            }
        }
    }

    /// Adds one object to a to-many relationship.
    public func addObject(_ object: ManagedObject, toKey key: String) throws {
        let relationship = try relationshipForWriting(key, toMany: true)
        try checkDestination(object, relationship)
        try fireFault()
        try context().relate(self, relationship, object)
    }

    /// Removes one object from a to-many relationship.
    public func removeObject(_ object: ManagedObject, fromKey key: String) throws {
        let relationship = try relationshipForWriting(key, toMany: true)
        try fireFault()
        try context().unrelate(self, relationship, object)
    }

    private func relationshipForWriting(_ key: String, toMany: Bool) throws -> RelationshipDescription {
        let index = try slotIndex(key)
        guard let relationship = entity.properties[index].relationship, relationship.isToMany == toMany else {
            throw ObjectStoreError.wrongType(entity: entity.name, key: key, expected: toMany ? "a to-many relationship key" : "a to-one relationship key", given: "'\(key)'")
        }
        return relationship
    }

    private func checkDestination(_ object: ManagedObject, _ relationship: RelationshipDescription) throws {
        guard object.entity.isKind(of: relationship.destinationEntityName) else {
            throw ObjectStoreError.wrongDestination(entity: entity.name, key: relationship.name, expected: relationship.destinationEntityName, given: object.entity.name)
        }
        guard object.managedObjectContext === managedObjectContext else {
            // An object whose deletion was saved has left its context: say so, not "another
            // context".
            throw object.managedObjectContext == nil ? ObjectStoreError.objectNotFound(object.objectID) : ObjectStoreError.foreignObject(object.objectID)
        }
    }

    /// The last error a typed property accessor swallowed (typed getters and setters cannot
    /// throw); `nil` after a successful access. The by-key methods throw these instead.
    public internal(set) var lastAccessError: (any Error)? {
        get { extras?.lastAccessError }
        set {
            if extras == nil && newValue == nil { return }
            madeExtras.lastAccessError = newValue
        }
    }

    @discardableResult
    func recordAccessError<R>(_ body: () throws -> R) -> R? {
        do {
            let result = try body()
            lastAccessError = nil
            return result
        } catch {
            lastAccessError = error
            return nil
        }
    }

    // MARK: Changes

    /// The stored properties changed since the last save (or all set values, for an inserted
    /// object): attribute values, and relationship destinations as IDs.
    public func changedValues() -> [String: SlotValue] {
        var result: [String: SlotValue] = [:]
        for index in changedSlotIndices {
            let property = entity.properties[index]
            if let attribute = property.attribute, !attribute.isStored { continue }
            result[property.name] = slots[index]
        }
        return result
    }

    /// The saved values of the given keys (all stored keys when `nil`); empty for an object
    /// never saved.
    public func committedValues(forKeys keys: [String]? = nil) -> [String: SlotValue] {
        guard let committed = committedSlots else { return [:] }
        var result: [String: SlotValue] = [:]
        for (index, property) in entity.properties.enumerated() where index < committed.count {
            if let keys, !keys.contains(property.name) { continue }
            if let attribute = property.attribute, !attribute.isStored { continue }
            result[property.name] = committed[index]
        }
        return result
    }
}

extension ManagedObject: CustomStringConvertible {
    public var description: String {
        "<\(entity.name) \(objectID)\(faultState ? " fault" : "")>"
    }
}
