import Foundation
import ObjectStoreModel
import ObjectStoreStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Migrates a store written with an older version of a model to the current version, step by
/// step through every version in between, each step inferred or custom (ObjectStore's Migration guide).
///
/// The migration writes new stores beside the old one and swaps the result in with one
/// rename only when every object has been migrated and validated. The old store is kept as a
/// backup (named in the result). A failure or a kill at any point leaves the original store
/// untouched and openable; running again starts over.
///
/// ```swift
/// let migrator = StoreMigrator(models: try ModelDirectory(url: modelsURL))
/// if let result = try migrator.migrate(storeURL: url, progress: { print($0) }) {
///     print("migrated; the old store is at \(result.backupURL.path)")
/// }
/// ```
public struct StoreMigrator: Sendable {
    /// The versions of the model.
    public let models: ModelDirectory
    /// Objects read and written per batch; memory stays bounded by it.
    public var batchSize = 2_000
    /// Whether a store written with a model the directory does not have is migrated from
    /// the model stored in the file (one inferred step to the current version). Off by
    /// default, as Core Data refuses a store without its source model: such a store may be
    /// newer than this program, and migrating it would drop what the newer version added.
    /// Turn it on only for a directory known to have dropped old versions.
    public var migratesFromStoredModel = false
    /// What happens to the backups of earlier migrations of the same store when a migration
    /// (or an upgrade) succeeds: kept (the default), or removed, so that only this one's
    /// backup stays.
    public var backupPolicy = BackupPolicy.keepAll

    /// What a successful migration does with the backups earlier ones left.
    public enum BackupPolicy: Sendable, Hashable {
        /// Every backup stays until the caller removes it: `STORE.v1-backup`, then
        /// `STORE.v1-backup-2` when a restored backup is migrated again, and so on.
        case keepAll
        /// Only the new backup stays: the files named `STORE.NAME-backup` or
        /// `STORE.NAME-backup-N` beside the store (regular files only, never a link) are
        /// removed once the migration has succeeded.
        case keepLatest
    }

    /// A migrator to the current version of `models`.
    public init(models: ModelDirectory) {
        self.models = models
    }

    // MARK: Planning

    /// One step of a migration.
    public struct Step: Sendable, Hashable {
        /// The source version's name, or "the model stored in the file" when the directory no
        /// longer has it (with ``StoreMigrator/migratesFromStoredModel``).
        public var source: String
        /// The destination version's name.
        public var destination: String
        /// Whether a custom mapping file drives the step.
        public var usesCustomMapping: Bool

        /// A step from one version to the next.
        public init(source: String, destination: String, usesCustomMapping: Bool) {
            self.source = source
            self.destination = destination
            self.usesCustomMapping = usesCustomMapping
        }
    }

    /// What a migration would do: its steps and the objects per source entity.
    public struct Plan: Sendable, Hashable {
        /// The steps, oldest version first.
        public var steps: [Step]
        /// Objects in the store per entity, before migrating.
        public var objectCounts: [String: Int]
        /// Whether anything needs doing.
        public var isNeeded: Bool { !steps.isEmpty }
    }

    /// Progress of a running migration.
    public struct Progress: Sendable, Hashable, CustomStringConvertible {
        /// The running step, from 1.
        public var step: Int
        /// How many steps the migration has.
        public var stepCount: Int
        /// Objects migrated so far in this step.
        public var done: Int
        /// Objects in the store.
        public var total: Int
        public var description: String { "step \(step)/\(stepCount): \(done)/\(total) objects" }
    }

    /// What a migration did.
    public struct Result: Sendable, Hashable {
        /// What was done to the model (no steps when only the file's format was upgraded).
        public var plan: Plan
        /// The store as it was before, kept until the caller removes it.
        public var backupURL: URL
        /// The pre-release binary format (1 to 7) the store was in, when the run also
        /// upgraded it to store format 1.0 (docs/store-format.md); nil otherwise.
        public var upgradedFormat: Int? = nil
    }

    /// The models a store must go through, oldest first (the store's own model first).
    ///
    /// A store whose model is newer than the current version, or none of the directory's
    /// versions, is refused: migrating it "down" would drop what the newer version added.
    func chain(for metadata: StoreMetadata, path: String) throws -> [(name: String, model: ManagedObjectModel)] {
        let all = try models.allModels()
        let names = models.versionNames
        let currentIndex = names.firstIndex(of: models.currentVersionName) ?? names.count - 1
        // Versions that change only what hashes leave out (validation rules, defaults) share
        // their hashes: the store is of the version it names when that is one of them, else
        // of the latest of them up to the current one.
        let matching = all.indices.filter { all[$0].entityVersionHashes == metadata.entityVersionHashes }
        // A version this program does not know is refused even when its entities hash as one
        // it knows: a newer version may differ only in what hashes leave out (its rules).
        if let name = metadata.modelVersionName, !names.contains(name), let same = matching.last {
            throw StoreError.unknownModelVersionName(path: path, storeVersion: name, sameEntitiesAs: names[same], knownVersions: names)
        }
        let named = metadata.modelVersionName.flatMap { name in matching.first { names[$0] == name && $0 <= currentIndex } }
        if let index = named ?? matching.last(where: { $0 <= currentIndex }) {
            // A step to a version of the same hashes changes no row: it is left out (Core Data
            // does not migrate between compatible models), unless a mapping file asks for it
            // or the version adds uniqueness constraints, which a step checks across the store.
            var kept = [index]
            for next in (index + 1)...max(index + 1, currentIndex) where next <= currentIndex {
                let last = kept[kept.count - 1]
                let compatible = all[next].entityVersionHashes == all[last].entityVersionHashes
                    && all[next].entities.map(\.uniquenessConstraints) == all[last].entities.map(\.uniquenessConstraints)
                if compatible && models.mappingText(from: names[last], to: names[next]) == nil { continue }
                kept.append(next)
            }
            return kept.map { (names[$0], all[$0]) }
        }
        if let newer = matching.first {
            throw StoreError.newerModel(path: path, storeVersion: names[newer], currentVersion: models.currentVersionName)
        }
        guard migratesFromStoredModel else {
            throw StoreError.unknownModelVersion(path: path, storeVersion: metadata.modelVersionName, knownVersions: names)
        }
        // The caller vouches that the store is older: start from the model in the file.
        return [("the model stored in the file", try metadata.storedModel()), (models.currentVersionName, all[currentIndex])]
    }

    /// The steps and object counts of migrating the store at `storeURL`, without writing.
    public func plan(storeURL: URL) throws -> Plan {
        let metadata = try Self.metadata(at: storeURL)
        let chain = try self.chain(for: metadata, path: storeURL.path)
        var steps: [Step] = []
        for (from, to) in zip(chain, chain.dropFirst()) {
            steps.append(Step(source: from.name, destination: to.name, usesCustomMapping: models.mappingText(from: from.name, to: to.name) != nil))
        }
        // Check every step's mapping now, so a dry run finds what a run would refuse.
        for (from, to) in zip(chain, chain.dropFirst()) { _ = try mapping(from: from, to: to) }
        var counts: [String: Int] = [:]
        if let first = chain.first {
            let store = try StoreFactory.open(storeURL, model: first.model, readOnly: true, readingLegacy: true)
            for entity in first.model.entities { counts[entity.name] = try store.objectIDs(ofEntity: entity.name).count }
        }
        return Plan(steps: steps, objectCounts: counts)
    }

    private func mapping(from: (name: String, model: ManagedObjectModel), to: (name: String, model: ManagedObjectModel)) throws -> MappingModel {
        if let text = models.mappingText(from: from.name, to: to.name) {
            return try MappingModel.custom(text, file: models.location + "/" + models.mappingFileName(from: from.name, to: to.name), from: from.model, to: to.model)
        }
        return try MappingModel.infer(from: from.model, to: to.model)
    }

    static func metadata(at url: URL) throws -> StoreMetadata {
        try StoreFactory.metadata(at: url)
    }

    // MARK: Running

    /// Migrates the store at `storeURL` to the current version when it needs it; returns `nil`
    /// when it is already current.
    ///
    /// - Parameters:
    ///   - storeURL: the store to migrate (a binary store of a pre-release format is also
    ///     upgraded to store format 1.0).
    ///   - destinationURL: write the result there instead of replacing the store (the
    ///     original is then left as it is); its extension picks the format, so this also
    ///     converts between binary and JSON stores.
    ///   - progress: called as objects are migrated, per step.
    @discardableResult
    public func migrate(storeURL: URL, destinationURL: URL? = nil, progress: ((Progress) -> Void)? = nil) throws -> Result? {
        try run(storeURL: storeURL, destinationURL: destinationURL, dryRun: false, progress: progress)
    }

    /// Runs the whole migration into temporary stores beside the original, with every check a
    /// real one makes (conversions, validation, uniqueness), then throws the temporary stores
    /// away: what `migrate` would do, without changing anything. Returns `nil` when the
    /// store is already current.
    ///
    /// - Throws: the ``MigrationError`` the migration would throw, naming the objects.
    @discardableResult
    public func dryRun(storeURL: URL, progress: ((Progress) -> Void)? = nil) throws -> Plan? {
        try run(storeURL: storeURL, destinationURL: nil, dryRun: true, progress: progress)?.plan
    }

    private func run(storeURL: URL, destinationURL: URL?, dryRun: Bool, progress: ((Progress) -> Void)?) throws -> Result? {
        try StoreFiles.withLock(of: storeURL) { storeURL throws -> Result? in
            // The new store goes beside the real file, so a symbolic link to it stays one.
            let (metadata, legacy) = try StoreFactory.metadataAndLegacyFormat(at: storeURL)
            let current = try models.currentModel()
            StoreFiles.removeLeftovers(of: destinationURL ?? storeURL)
            let chain = try self.chain(for: metadata, path: storeURL.path)
            let converting = destinationURL.map { StoreType.forFile($0) != StoreType.forFile(storeURL) } ?? false
            guard chain.count > 1 || converting else {
                // A pre-release file of the current model: its format alone is upgraded.
                guard let legacy, destinationURL == nil, !dryRun else { return nil }
                StoreFiles.removeStaleBackups(of: storeURL, version: "format\(legacy)")
                guard let upgrade = try StoreFactory.upgradeLegacyFile(at: storeURL, model: current, backup: { StoreFiles.backupURL(for: storeURL, version: "format\($0)") })
                else { return nil }
                if backupPolicy == .keepLatest { StoreFiles.removeBackups(of: storeURL, keeping: upgrade.backupURL) }
                return Result(plan: Plan(steps: [], objectCounts: [:]), backupURL: upgrade.backupURL, upgradedFormat: upgrade.version)
            }
            if destinationURL == nil, !dryRun { StoreFiles.removeStaleBackups(of: storeURL, version: chain.first?.name ?? "old") }
            if destinationURL == nil, case let links = StoreFiles.linkCount(of: storeURL), links > 1 {
                throw StoreError.io(path: storeURL.path, reason: "the store has \(links) hard links, and migrating it would leave the others behind; use a symbolic link to share a store")
            }
            let plan = try self.plan(storeURL: storeURL)
            let total = plan.objectCounts.values.reduce(0, +)
            var input = storeURL
            var temporaries: [URL] = []
            let finalURL = destinationURL ?? storeURL
            defer { for url in temporaries { StoreFiles.remove(url) } }
            let steps = chain.count > 1 ? Array(zip(chain, chain.dropFirst())) : [(chain[0], chain[0])]
            for (index, (from, to)) in steps.enumerated() {
                let mapping = chain.count > 1 ? try self.mapping(from: from, to: to) : try MappingModel.infer(from: from.model, to: to.model)
                let isLast = index == steps.count - 1
                let type = isLast ? StoreType.forFile(finalURL) : StoreType.forFile(storeURL)
                let output = StoreFiles.stepURL(beside: finalURL, step: index + 1, json: type == .json)
                temporaries.append(output)
                do {
                    try runStep(mapping, from: input, to: output, type: type, identifier: metadata.storeIdentifier) { done in
                        progress?(Progress(step: index + 1, stepCount: steps.count, done: done, total: total))
                    }
                } catch let error as ValidationError {
                    // The destination store refused rows (a uniqueness constraint the old
                    // version did not have): a failed migration, naming them.
                    let failures = error.failures.map { "\($0.objectID.entityName) \($0.objectID.primaryKey.map(String.init) ?? "(new)")\($0.key.map { ".\($0)" } ?? ""): \($0.message)" }
                    throw MigrationError.validation(failures: Array(failures.prefix(20)), total: failures.count)
                }
                // A step's input, once the next step is written, is needed no more: removed
                // now, so a run killed after its final rename leaves no temporary behind (the
                // next open finds the store current and looks for none).
                if input != storeURL {
                    StoreFiles.remove(input)
                    temporaries.removeAll { $0 == input }
                }
                input = output
            }
            if dryRun { return Result(plan: plan, backupURL: storeURL) }
            // The backup is a second name for the original; the rename then swaps the new store
            // in atomically. A crash before the rename leaves the original.
            let backup = destinationURL == nil ? StoreFiles.backupURL(for: storeURL, version: chain.first?.name ?? "old") : storeURL
            try StoreFiles.replace(finalURL, with: input, keepingBackupAt: destinationURL == nil ? backup : nil)
            temporaries.removeAll { $0 == input }
            if destinationURL == nil, backupPolicy == .keepLatest { StoreFiles.removeBackups(of: storeURL, keeping: backup) }
            return Result(plan: plan, backupURL: backup, upgradedFormat: destinationURL == nil ? legacy : nil)
        }
    }

    /// Removes temporary stores of migrations that were killed, beside `storeURL`: those
    /// whose process is gone, and those of versions that did not name it.
    public static func removeLeftovers(of storeURL: URL) {
        StoreFiles.removeLeftovers(of: storeURL)
    }

    // MARK: One step

    private func runStep(_ mapping: MappingModel, from input: URL, to output: URL, type: StoreType, identifier: String, progress: (Int) -> Void) throws {
        // The source may be a pre-release file: the migration reads it with the legacy reader
        // and writes store format 1.0, which upgrades it too.
        let sourceStore = try StoreFactory.open(input, model: mapping.source, readOnly: true, readingLegacy: true)
        let destinationStore = try StoreFactory.open(output, type: type, model: mapping.destination, identifier: identifier)
        // Batches append; one compaction at the end writes the snapshot (compacting as the
        // log grew rewrote the growing store again and again).
        destinationStore.suspendAutomaticCompaction()
        let sourceCoordinator = PersistentStoreCoordinator(model: mapping.source, store: sourceStore)
        let context = ManagedObjectContext(coordinator: sourceCoordinator)
        context.undoManager = nil
        let compiler = PredicateCompiler(model: mapping.source)
        var writer = StepWriter(mapping: mapping, store: destinationStore, batchSize: type == .json ? Int.max : batchSize)
        var done = 0
        progress(0)

        // Entities made from distinct values come first, so lookups can find them; entities
        // made one per source object that a lookup finds come last, after the objects whose
        // lookups give them their inverse references, and are indexed first by the value
        // their key attribute will take (before, such a lookup found nothing: a silent nil).
        var lookedUp = Set<[String]>()
        for entityMapping in mapping.entityMappings {
            for case .lookup(let entity, let key, _) in entityMapping.relationships.values { lookedUp.insert([entity, key]) }
        }
        let perSource = mapping.entityMappings.filter { $0.distinctBy == nil }
        let found = perSource.filter { target in lookedUp.contains { $0[0] == target.destinationEntity } }
        for target in found {
            guard let destinationEntity = mapping.destination.entity(named: target.destinationEntity),
                  let sourceEntity = mapping.source.entity(named: target.sourceEntity) else { continue }
            for pair in lookedUp where pair[0] == target.destinationEntity {
                guard let attribute = destinationEntity.attribute(named: pair[1]), let valueMapping = target.attributes[pair[1]] else { continue }
                let reader: ExpressionClosure
                switch valueMapping {
                case .copy(let name): reader = compiler.compile(.keyPath(.evaluatedObject, [name]), entity: sourceEntity)
                case .expression(let e): reader = Self.compileWithSource(e, compiler: compiler, entity: sourceEntity)
                }
                for id in try sourceStore.objectIDs(ofEntity: sourceEntity.name) {
                    guard let sourceKey = id.primaryKey else { continue }
                    let object = try context.existingObject(with: id)
                    let scope = EvaluationScope(now: Date(), variables: ["source": .object(object)])
                    let value = try Self.convert(try reader(object, scope).sortValue, to: attribute, entity: destinationEntity.name)
                    writer.indexLookupTarget(entity: destinationEntity.name, key: pair[1], value: value, sourceKey: sourceKey)
                }
                context.reset()
            }
        }
        let foundNames = Set(found.map(\.destinationEntity))
        let ordered = mapping.entityMappings.filter { $0.distinctBy != nil } + perSource.filter { !foundNames.contains($0.destinationEntity) }
            + perSource.filter { foundNames.contains($0.destinationEntity) }
        for entityMapping in ordered {
            guard let destinationEntity = mapping.destination.entity(named: entityMapping.destinationEntity),
                let sourceEntity = mapping.source.entity(named: entityMapping.sourceEntity)
            else { continue }
            let attributeReaders = entityMapping.attributes.mapValues { value -> ExpressionClosure in
                switch value {
                case .copy(let name): return compiler.compile(.keyPath(.evaluatedObject, [name]), entity: sourceEntity)
                case .expression(let e): return Self.compileWithSource(e, compiler: compiler, entity: sourceEntity)
                }
            }
            let distinct = entityMapping.distinctBy.map { Self.compileWithSource($0, compiler: compiler, entity: sourceEntity) }
            // What each destination slot is made from, worked out once per entity (walking
            // the properties per object copied every description).
            let initial = destinationEntity.properties.map(SlotValue.initial(for:))
            var fills: [SlotFill] = []
            for (index, property) in destinationEntity.properties.enumerated() {
                switch property {
                case .attribute(let attribute):
                    guard attribute.isStored, let reader = attributeReaders[attribute.name] else { continue }
                    fills.append(SlotFill(slot: index, attribute: attribute, reader: reader))
                case .relationship(let relationship):
                    guard entityMapping.distinctBy == nil, let relationshipMapping = entityMapping.relationships[relationship.name] else { continue }
                    // A to-many derived from its inverse is not stored: the inverse's copy makes it.
                    if relationship.isDerivedFromInverse && relationship.isToMany, case .copy = relationshipMapping { continue }
                    var lookupValue: ExpressionClosure?
                    if case .lookup(_, _, let value) = relationshipMapping {
                        lookupValue = Self.compileWithSource(value, compiler: compiler, entity: sourceEntity)
                    }
                    fills.append(SlotFill(slot: index, relationship: (relationship, relationshipMapping, lookupValue)))
                }
            }
            let ids = try sourceStore.objectIDs(ofEntity: sourceEntity.name)
            var seen = Set<Value>()
            for batch in stride(from: 0, to: ids.count, by: batchSize) {
                for id in ids[batch..<min(batch + batchSize, ids.count)] {
                    let object = try context.existingObject(with: id)
                    let scope = EvaluationScope(now: Date(), variables: ["source": .object(object)])
                    if let distinct {
                        let key = try distinct(object, scope).sortValue
                        guard !key.isNull, seen.insert(key).inserted else { continue }
                    }
                    var slots = initial
                    for fill in fills {
                        if let attribute = fill.attribute, let reader = fill.reader {
                            slots[fill.slot] = .value(try Self.convert(try reader(object, scope).sortValue, to: attribute, entity: destinationEntity.name))
                        } else if let (relationship, relationshipMapping, lookupValue) = fill.relationship {
                            slots[fill.slot] = try writer.relationshipSlot(relationship, relationshipMapping, lookupValue: lookupValue, source: object,
                                                                           ownEntity: destinationEntity.name, scope: scope)
                        }
                    }
                    let key: Int64? = entityMapping.distinctBy == nil ? id.primaryKey : nil
                    try writer.add(entity: destinationEntity, key: key, slots: slots)
                    done += 1
                }
                try writer.flush()
                context.reset()
                progress(done)
            }
        }
        try writer.finish(sourceMetadata: sourceStore.metadata)
        let failures = writer.failures
        if !failures.isEmpty {
            throw MigrationError.validation(failures: Array(failures.prefix(20)), total: failures.count)
        }
        // A store that keeps history keeps it on; its transactions name the old model's
        // properties and stay behind, but numbering goes on, so a token from before the
        // migration is reported expired, never taken for a later transaction.
        if sourceStore.keepsHistory {
            try destinationStore.continueHistory(after: try sourceStore.historyBounds().last)
        }
        try destinationStore.compact()
    }

    /// One destination slot of a migration step and what makes it: an attribute read from
    /// the source, or a relationship mapped. A class, so walking a step's fills per object
    /// retains one reference each instead of copying descriptions.
    private final class SlotFill {
        let slot: Int
        let attribute: AttributeDescription?
        let reader: ExpressionClosure?
        let relationship: (RelationshipDescription, RelationshipMapping, ExpressionClosure?)?

        init(slot: Int, attribute: AttributeDescription? = nil, reader: ExpressionClosure? = nil,
             relationship: (RelationshipDescription, RelationshipMapping, ExpressionClosure?)? = nil) {
            self.slot = slot
            self.attribute = attribute
            self.reader = reader
            self.relationship = relationship
        }
    }

    static func compileWithSource(_ expression: ObjectExpression, compiler: PredicateCompiler, entity: EntityDescription) -> ExpressionClosure {
        var withSource = compiler
        withSource.variableEntities["source"] = entity
        return withSource.compile(expression, entity: entity)
    }

    /// Converts a value to an attribute's type (widening numbers), or throws naming it.
    static func convert(_ value: Value, to attribute: AttributeDescription, entity: String) throws -> Value {
        if value.isNull { return attribute.defaultValue.isNull ? .null : (attribute.isOptional ? .null : attribute.defaultValue) }
        do {
            return try ManagedObject.coerce(value, to: attribute, entity: entity)
        } catch {
            throw MigrationError.conversion(entity: entity, attribute: attribute.name, value: value.description, type: attribute.type.rawValue)
        }
    }
}

/// A migration that could not finish. The original store is untouched.
public enum MigrationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Migrated objects that would not validate with the new model.
    case validation(failures: [String], total: Int)
    /// A value that cannot be converted to its new type.
    case conversion(entity: String, attribute: String, value: String, type: String)

    public var description: String {
        switch self {
        case .validation(let failures, let total):
            return "the migrated objects do not validate (\(total) problem\(total == 1 ? "" : "s")):\n" + failures.map { "  " + $0 }.joined(separator: "\n")
        case .conversion(let entity, let attribute, let value, let type):
            return "cannot convert \(value) to \(type) for \(entity).\(attribute)"
        }
    }
}

extension StoreMigrator {
    /// Opens the store at `url` with the current model, creating it when absent and migrating
    /// it first when it was written with an older version.
    ///
    /// ```swift
    /// let (coordinator, migration) = try StoreMigrator(models: models).openStore(at: url)
    /// if let migration { print("migrated; backup at \(migration.backupURL.path)") }
    /// ```
    ///
    /// `durability` is the opened binary store's (`StoreDurability`); a migration
    /// always flushes what it writes.
    public func openStore(at url: URL, readOnly: Bool = false, durability: StoreDurability = .full, clock: @escaping @Sendable () -> Date = { Date() },
                          progress: ((Progress) -> Void)? = nil) throws -> (PersistentStoreCoordinator, Result?) {
        let current = try models.currentModel()
        var result: Result?
        if StoreFiles.exists(url) {
            let (metadata, legacy) = try StoreFactory.metadataAndLegacyFormat(at: url)
            if !readOnly, legacy != nil {
                // A pre-release binary file: upgraded (and migrated, when its model is older)
                // with a backup. Read-only, the open below refuses it.
                result = try migrate(storeURL: url, progress: progress)
            } else if !metadata.incompatibleEntities(with: current).isEmpty
                        || metadata.modelVersionName.map({ !models.versionNames.contains($0) }) == true {
                // A newer or unknown version is refused here, before anything is written
                // (one this program does not know by name too, whatever its hashes).
                let chain = try self.chain(for: metadata, path: url.path)
                guard !readOnly else {
                    throw StoreError.invalidRequest(path: url.path, reason: "the store was written with model version \(chain.first?.name ?? "?"), and opening it read-only cannot migrate it to the current \(models.currentVersionName)")
                }
                result = try migrate(storeURL: url, progress: progress)
            }
        }
        return (try PersistentStoreCoordinator(model: current, storeURL: url, readOnly: readOnly, durability: durability, clock: clock), result)
    }
}
