import Foundation
import ObjectStoreModel

/// The readable store: one JSON file with stable key order, one line per object, objects
/// grouped by entity and sorted by key, so a change shows up as a small diff
/// (docs/store-format.md). Every save rewrites the file atomically: a temporary file in the
/// same directory, flushed, then renamed over the old one.
///
/// ```swift
/// let store = try JSONStore(url: URL(fileURLWithPath: "tasks.json"), model: model)
/// ```
package final class JSONStore: PersistentStore, Sendable {
    /// The format version this code writes and the newest it reads: 1, or 2 for a file that
    /// keeps history (which a program of version 1, which would save without recording a
    /// transaction, refuses).
    package static let formatVersion = 2
    /// The format version of a file without history.
    static let plainFormatVersion = 1
    static let formatName = "ObjectStore JSON store"

    /// The store file.
    package let url: URL
    /// The model the store was opened with.
    package let model: ManagedObjectModel
    /// Whether saves are refused.
    package let isReadOnly: Bool
    /// The file's path (URL.path decodes the URL each time it is asked).
    private let path: String
    private let fileLock: FileLock

    private struct State {
        var metadata: StoreMetadata?
        var rows: [ObjectID: StoredRow] = [:]
        /// The file the rows were read from, kept open (so its inode cannot be reused by a
        /// replacement), and its identity, size and time then: the file is unchanged while
        /// the locked file's fingerprint is the same.
        var held: (fd: Int32, fingerprint: [Int64])?
        /// The file's history, when it keeps one.
        var history: HistoryList?
        /// Set by ``trackHistory(_:)``: saves record transactions (the first one starts the
        /// file's history), and transactions past the bound are dropped.
        var retention: HistoryRetention?
        /// The number of the transaction this opening's last save recorded.
        var lastSaved: Int64?
    }
    private let state = Locked(State())

    /// Opens the store at `url`, creating it when absent (unless read-only).
    ///
    /// - Throws: ``StoreError`` for invalid JSON or values (with line and column), a foreign or
    ///   newer file, or one written with a different model. The file is never modified then.
    package convenience init(url: URL, model: ManagedObjectModel, readOnly: Bool = false) throws {
        try self.init(url: url, model: model, readOnly: readOnly, identifier: nil)
    }

    /// Opens or creates a store; a new store takes `identifier` as its UUID when given.
    package init(url: URL, model: ManagedObjectModel, readOnly: Bool, identifier: String?) throws {
        self.url = url
        self.path = url.path
        self.model = model
        self.isReadOnly = readOnly
        self.fileLock = FileLock(storePath: url.path)
        try fileLock.createIfMissing(readOnly: readOnly) {
            let metadata = StoreMetadata(storeIdentifier: identifier ?? UUID().uuidString, model: model)
            return Array(Self.render(metadata, rows: [:], history: nil, model: model).utf8)
        }
        try fileLock.withLock(exclusive: false) { fd, _ in try state.withLock { try reload(fd, into: &$0) } }
        try state.withLock { $0.metadata }?.requireCompatible(with: model, path: url.path)
    }

    deinit {
        state.withLock { state in
            if let held = state.held { close(held.fd) }
        }
    }

    /// Reads a store file's metadata without opening it for a model (to pick a migration).
    package static func metadata(at url: URL) throws -> StoreMetadata {
        try FileLock(storePath: url.path).withLock(exclusive: false) { fd, _ in
            let root = try parseRoot(FileIO.readAll(fd, path: url.path, from: 0), path: url.path)
            return try readMetadata(root, path: url.path)
        }
    }

    package var identifier: String { state.withLock { $0.metadata?.storeIdentifier ?? "" } }
    package var metadata: StoreMetadata? { state.withLock { $0.metadata } }

    // MARK: Reading

    private static func parseRoot(_ bytes: [UInt8], path: String) throws -> JSONNode {
        if bytes.isEmpty { throw StoreError.foreignFile(path: path, reason: "the file is empty") }
        if bytes.starts(with: BinaryStore.magic) { throw StoreError.foreignFile(path: path, reason: "it is a binary store; name binary stores without .json") }
        do {
            return try JSONParser.parse(bytes)
        } catch {
            throw StoreError.corrupt(path: path, reason: "invalid JSON at line \(error.location.line), column \(error.location.column): \(error.message)")
        }
    }

    private static func readMetadata(_ root: JSONNode, path: String) throws -> StoreMetadata {
        func bad(_ node: JSONNode?, _ message: String) -> StoreError {
            let location = node.map { " (line \($0.location.line), column \($0.location.column))" } ?? ""
            return .corrupt(path: path, reason: message + location)
        }
        guard root.members != nil, root["format"]?.stringValue == formatName else {
            throw StoreError.foreignFile(path: path, reason: "no \"format\": \"\(formatName)\" key at the top")
        }
        guard let versionText = root["formatVersion"]?.numberText, let version = Int(versionText) else {
            throw bad(root["formatVersion"] ?? root, "\"formatVersion\" must be an integer")
        }
        guard version <= formatVersion else { throw StoreError.newerFormat(path: path, version: version, supported: formatVersion) }
        guard version >= 1 else { throw bad(root["formatVersion"], "\"formatVersion\" \(version) is not a valid format version (1 or more)") }
        // Every key is required and no other may appear: a misspelt "objects" must not read
        // as an empty store that the next save would write back empty.
        let required = ["format", "formatVersion", "storeUUID", "modelVersion", "nextKeys", "entityVersionHashes", "objects", "model"]
        // A file of version 2 may keep history.
        let allowed = required + (version >= 2 ? ["history"] : [])
        for member in root.members ?? [] where !allowed.contains(member.key) {
            let hint = NameSuggestion.closest(to: member.key, in: allowed).map { " (did you mean \"\($0)\"?)" } ?? ""
            throw StoreError.corrupt(path: path, reason: "unknown key \"\(member.key)\" at the top\(hint) (line \(member.keyLocation.line), column \(member.keyLocation.column))")
        }
        for key in required where root[key] == nil {
            throw StoreError.corrupt(path: path, reason: "the key \"\(key)\" is missing at the top")
        }
        var seen: Set<String> = []
        for member in root.members ?? [] where !seen.insert(member.key).inserted {
            throw StoreError.corrupt(path: path, reason: "the key \"\(member.key)\" appears twice at the top (line \(member.keyLocation.line))")
        }
        guard let identifier = root["storeUUID"]?.stringValue, UUID(uuidString: identifier) != nil else {
            throw bad(root["storeUUID"] ?? root, "\"storeUUID\" must be a UUID string")
        }
        guard let schema = root["model"]?.stringValue else { throw bad(root["model"] ?? root, "\"model\" must hold the schema text") }
        var nextKeys: [String: Int64] = [:]
        guard let nextKeyMembers = root["nextKeys"]?.members else { throw bad(root["nextKeys"], "\"nextKeys\" must be an object of entity names and keys") }
        for member in nextKeyMembers {
            guard let text = member.value.numberText, let key = Int64(text), key >= 1, key <= StoreMetadata.maxKey + 1 else {
                throw bad(member.value, "next key of \(member.key) must be an integer from 1 to \(StoreMetadata.maxKey + 1)")
            }
            nextKeys[member.key] = key
        }
        var hashes: [String: VersionHash] = [:]
        for member in root["entityVersionHashes"]?.members ?? [] {
            guard let text = member.value.stringValue, let hash = VersionHash(hex: text) else {
                throw bad(member.value, "entity version hash of \(member.key) must be 64 hex digits")
            }
            hashes[member.key] = hash
        }
        return StoreMetadata(storeIdentifier: identifier, modelVersionName: root["modelVersion"]?.stringValue, entityVersionHashes: hashes, schemaText: schema, nextKeys: nextKeys)
    }

    /// Reads the whole file: metadata, then every object, checking each value against the
    /// model the store was written with.
    private func reload(_ fd: Int32, into state: inout State) throws {
        let root = try Self.parseRoot(FileIO.readAll(fd, path: path, from: 0), path: path)
        let metadata = try Self.readMetadata(root, path: path)
        // Values are decoded with the model the file was written with.
        let storedModel: ManagedObjectModel
        if metadata.incompatibleEntities(with: model).isEmpty {
            storedModel = model
        } else {
            do {
                storedModel = try metadata.storedModel()
            } catch {
                throw StoreError.corrupt(path: path, reason: "the stored model does not load: \(error)")
            }
        }
        var loaded: [ObjectID: StoredRow] = [:]
        guard let blocks = root["objects"]?.members else {
            throw StoreError.corrupt(path: path, reason: "\"objects\" must be an object of entity names and arrays (line \(root["objects"]?.location.line ?? 1))")
        }
        for block in blocks {
            guard let entity = storedModel.entity(named: block.key) else {
                throw StoreError.corrupt(path: path, reason: "unknown entity \"\(block.key)\" (line \(block.keyLocation.line))")
            }
            guard let objects = block.value.elements else {
                throw StoreError.corrupt(path: path, reason: "objects of \(block.key) must be an array (line \(block.value.location.line))")
            }
            for object in objects {
                let row = try Self.decodeRow(object, entity: entity, storeIdentifier: metadata.storeIdentifier, model: storedModel, path: path)
                let key = row.objectID.primaryKey ?? 0
                guard loaded[row.objectID] == nil else {
                    throw StoreError.corrupt(path: path, reason: "two objects of \(entity.name) have the key \(key) (line \(object.location.line))")
                }
                // A key at or past the next one would be handed out again: the next insert
                // would overwrite this object.
                guard key < metadata.nextKey(for: entity.name) else {
                    throw StoreError.corrupt(path: path, reason: "\(entity.name) \(key) is not below the entity's next key \(metadata.nextKey(for: entity.name)) in \"nextKeys\" (line \(object.location.line))")
                }
                loaded[row.objectID] = row
            }
        }
        state.history = try root["history"].map { try Self.decodeHistory($0, model: storedModel, storeIdentifier: metadata.storeIdentifier, path: path) }
        state.metadata = metadata
        state.rows = loaded
        try hold(fd, in: &state)
    }

    private func hold(_ fd: Int32, in state: inout State) throws {
        guard let fingerprint = FileIO.fingerprint(fd) else { throw StoreError.io(path: path, reason: "cannot read: \(FileIO.errorText())") }
        let copy = dup(fd)
        guard copy >= 0 else { throw StoreError.io(path: path, reason: "cannot keep the file open: \(FileIO.errorText())") }
        if let held = state.held { close(held.fd) }
        state.held = (copy, fingerprint)
    }

    private static func decodeRow(_ node: JSONNode, entity: EntityDescription, storeIdentifier: String, model: ManagedObjectModel, path: String) throws -> StoredRow {
        func bad(_ at: JSONNode, _ message: String) -> StoreError {
            .corrupt(path: path, reason: "\(message) (line \(at.location.line), column \(at.location.column))")
        }
        guard let members = node.members else { throw bad(node, "an object of \(entity.name) must be a JSON object") }
        guard let keyText = node["key"]?.numberText, let key = Int64(keyText), key >= 1, key <= StoreMetadata.maxKey else {
            throw bad(node, "an object of \(entity.name) needs a \"key\" from 1 to \(StoreMetadata.maxKey)")
        }
        guard let versionText = node["version"]?.numberText, let version = Int64(versionText), version >= 1, version <= StoreMetadata.maxKey else {
            throw bad(node, "\(entity.name) \(key) needs a \"version\" from 1 to \(StoreMetadata.maxKey)")
        }
        var names: Set<String> = []
        for member in members where !names.insert(member.key).inserted {
            throw bad(member.value, "\(entity.name) \(key) has \"\(member.key)\" twice")
        }
        var slots = entity.properties.map(SlotValue.initial(for:))
        for (index, property) in entity.properties.enumerated() {
            if case .value = slots[index] { slots[index] = .value(.null) }
            if let attribute = property.attribute, !attribute.isStored { slots[index] = .initial(for: property) }
        }
        func reference(_ value: JSONNode) throws -> ObjectID {
            guard let text = value.stringValue, let slash = text.lastIndex(of: "/"), let key = Int64(text[text.index(after: slash)...]),
                model.entity(named: String(text[..<slash])) != nil
            else { throw bad(value, "a reference must be written \"Entity/key\"") }
            return ObjectID(entityName: String(text[..<slash]), storeIdentifier: storeIdentifier, key: .permanent(key))
        }
        for member in members where member.key != "key" && member.key != "version" {
            guard let index = entity.slot(of: member.key) else {
                throw bad(member.value, "\(entity.name) has no property \"\(member.key)\"")
            }
            switch entity.properties[index] {
            case .attribute(let attribute):
                switch JSONText.decode(member.value, as: attribute.type) {
                case .success(let value): slots[index] = .value(value)
                case .failure(let problem): throw bad(member.value, "\(entity.name).\(member.key) of \(key): \(problem.message)")
                }
            case .relationship(let relationship):
                if relationship.isToMany {
                    guard let items = member.value.elements else { throw bad(member.value, "\(entity.name).\(member.key) must be an array of references") }
                    // A list derived from its inverse (a file written before the model said so) is not read.
                    slots[index] = relationship.isDerivedFromInverse ? .toMany([]) : .toMany(try items.map(reference))
                } else if case .null = member.value.kind {
                    slots[index] = .toOne(nil)
                } else {
                    slots[index] = .toOne(try reference(member.value))
                }
            }
        }
        return StoredRow(objectID: ObjectID(entityName: entity.name, storeIdentifier: storeIdentifier, key: .permanent(key)), version: version, slots: slots)
    }

    /// Reads the file again unless the locked file `fd` is the one read last, unchanged.
    private func refresh(_ fd: Int32, _ state: inout State) throws {
        if state.held == nil || FileIO.fingerprint(fd) != state.held?.fingerprint { try reload(fd, into: &state) }
    }

    // MARK: Writing

    /// The file's text: fixed key order, one object per line.
    static func render(_ metadata: StoreMetadata, rows: [ObjectID: StoredRow], history: HistoryList?, model: ManagedObjectModel) -> String {
        var text = "{\n"
        text += "  \"format\": \(JSONText.quote(formatName)),\n"
        text += "  \"formatVersion\": \(history == nil ? plainFormatVersion : formatVersion),\n"
        text += "  \"storeUUID\": \(JSONText.quote(metadata.storeIdentifier)),\n"
        text += "  \"modelVersion\": \(metadata.modelVersionName.map(JSONText.quote) ?? "null"),\n"
        text += "  \"nextKeys\": {" + metadata.nextKeys.keys.sorted().map { "\(JSONText.quote($0)): \(metadata.nextKeys[$0] ?? 1)" }.joined(separator: ", ") + "},\n"
        text += "  \"entityVersionHashes\": {"
        text += metadata.entityVersionHashes.keys.sorted().map { "\n    \(JSONText.quote($0)): \"\(metadata.entityVersionHashes[$0]?.hex ?? "")\"" }.joined(separator: ",")
        text += "\n  },\n"
        text += "  \"objects\": {"
        var byEntity: [String: [StoredRow]] = [:]
        for row in rows.values { byEntity[row.objectID.entityName, default: []].append(row) }
        var blocks: [String] = []
        for entity in model.entities {
            let entityRows = (byEntity[entity.name] ?? []).sorted { ($0.objectID.primaryKey ?? 0) < ($1.objectID.primaryKey ?? 0) }
            guard !entityRows.isEmpty else { continue }
            let lines = entityRows.map { "      " + renderRow($0, entity: entity) }
            blocks.append("\n    \(JSONText.quote(entity.name)): [\n" + lines.joined(separator: ",\n") + "\n    ]")
        }
        text += blocks.joined(separator: ",")
        text += blocks.isEmpty ? "},\n" : "\n  },\n"
        if let history { text += "  \"history\": " + renderHistory(history, model: model) + ",\n" }
        text += "  \"model\": \(JSONText.quote(metadata.schemaText))\n"
        return text + "}\n"
    }

    private static func renderRow(_ row: StoredRow, entity: EntityDescription) -> String {
        var fields = ["\"key\": \(row.objectID.primaryKey ?? 0)", "\"version\": \(row.version)"]
        for (index, property) in entity.properties.enumerated() where index < row.slots.count {
            if let attribute = property.attribute, !attribute.isStored { continue }
            if let relationship = property.relationship, relationship.isTransient || (relationship.isDerivedFromInverse && relationship.isToMany) { continue }
            let text: String
            switch row.slots[index] {
            case .value(let value): text = JSONText.encode(value)
            case .toOne(nil): text = "null"
            case .toOne(let id?): text = JSONText.quote("\(id.entityName)/\(id.primaryKey ?? 0)")
            case .toMany(let ids): text = "[" + ids.map { JSONText.quote("\($0.entityName)/\($0.primaryKey ?? 0)") }.joined(separator: ", ") + "]"
            }
            fields.append("\(JSONText.quote(property.name)): \(text)")
        }
        return "{" + fields.joined(separator: ", ") + "}"
    }

    /// Replaces the real file (a symbolic link to it stays one).
    private func write(to realPath: String, _ state: inout State) throws {
        guard let metadata = state.metadata else { return }
        let fd = try FileIO.replace(realPath, with: Array(Self.render(metadata, rows: state.rows, history: state.history, model: model).utf8))
        defer { close(fd) }
        try hold(fd, in: &state)
    }

    // MARK: PersistentStore

    package func row(for id: ObjectID) throws -> StoredRow? {
        state.withLock { $0.rows[id] }
    }

    package func catchUp() throws {
        try fileLock.withLock(exclusive: false) { fd, _ in
            try state.withLock { try refresh(fd, &$0) }
        }
    }

    package func objectIDs(ofEntity entityName: String) throws -> [ObjectID] {
        try fileLock.withLock(exclusive: false) { fd, _ in
            try state.withLock { state in
                try refresh(fd, &state)
                return state.rows.keys.filter { $0.entityName == entityName }.sorted(by: ObjectID.tieBreak)
            }
        }
    }

    package func allocateKeys(count: Int, entityName: String) throws -> [Int64] {
        guard count > 0 else { return [] }
        guard !isReadOnly else { throw StoreError.readOnly(path: path) }
        return try fileLock.withLock { fd, realPath in
            try state.withLock { state in
                try refresh(fd, &state)
                let first = state.metadata?.nextKey(for: entityName) ?? 1
                state.metadata?.nextKeys[entityName] = first + Int64(count)
                try write(to: realPath, &state)
                return (0..<Int64(count)).map { first + $0 }
            }
        }
    }

    package func withExclusiveAccess<T>(_ body: () throws -> T) throws -> T {
        guard !isReadOnly else { throw StoreError.readOnly(path: path) }
        return try fileLock.withLock { fd, _ in
            try state.withLock { try refresh(fd, &$0) }
            return try body()
        }
    }

    package func save(_ changes: StoreChanges) throws -> [ObjectID: ObjectID] {
        guard !changes.isEmpty else { return [:] }
        guard !isReadOnly else { throw StoreError.readOnly(path: path) }
        return try fileLock.withLock { fd, realPath in
            try state.withLock { state in
                try refresh(fd, &state)
                try checkVersions(changes, current: { state.rows[$0]?.version })
                let violations = try UniquenessCheck(model: model).failures(changes, rows: state.rows)
                if !violations.isEmpty { throw ValidationError(failures: violations) }
                let destinations = DestinationCheck(model: model), rows = state.rows
                let dangling = try destinations.failures(changes, exists: { rows[$0] != nil })
                    + destinations.deletionFailures(changes, rows: { name, slot in
                        rows.values.filter { $0.objectID.entityName == name && slot < $0.slots.count }.map { ($0.objectID, $0.slots[slot]) }
                    })
                if !dangling.isEmpty { throw ValidationError(failures: dangling) }
                let (keyed, mapping, nextKeys) = changes.assigningKeys(from: state.metadata?.nextKeys ?? [:])
                // The whole file is rewritten: a failed write puts the rows back as they were.
                let before = (state.rows, state.metadata, state.history)
                if state.history != nil || state.retention != nil {
                    var history = state.history ?? HistoryList()
                    let rows = state.rows
                    let values = try historyChanges(keyed, draft: changes.transaction, model: model, stored: { rows[$0] })
                    let now = changes.transaction?.timestamp ?? Date()
                    history.transactions.append(HistoryTransaction(
                        number: history.last + 1, storeIdentifier: identifierLocked(state), timestamp: now, author: changes.transaction?.author,
                        contextName: changes.transaction?.contextName, processID: currentProcessID, changes: values))
                    state.lastSaved = history.last
                    if let retention = state.retention { history.apply(retention, now: now) }
                    state.history = history
                }
                for row in keyed.inserted + keyed.updated.map(\.row) { state.rows[row.objectID] = row }
                for (id, _) in keyed.deleted { state.rows[id] = nil }
                state.metadata?.nextKeys = nextKeys
                do {
                    try write(to: realPath, &state)
                } catch {
                    (state.rows, state.metadata, state.history) = before
                    throw error
                }
                return mapping
            }
        }
    }
}

// MARK: History

extension JSONStore {
    private func identifierLocked(_ state: State) -> String { state.metadata?.storeIdentifier ?? "" }

    package var keepsHistory: Bool { state.withLock { $0.history != nil || $0.retention != nil } }
    package var lastSavedTransaction: Int64? { state.withLock { $0.lastSaved } }

    package func trackHistory(_ retention: HistoryRetention) throws {
        state.withLock { $0.retention = retention }
    }

    package func continueHistory(after number: Int64) throws {
        try changeHistory { _ in
            var history = HistoryList()
            history.start = max(1, number + 1)
            return history
        }
    }

    /// Writes the file with the history `change` makes of the current one (nil: nothing
    /// to write), under the lock; a failed write leaves the history as it was.
    private func changeHistory(_ change: (HistoryList?) throws -> HistoryList?) throws {
        guard !isReadOnly else { throw StoreError.readOnly(path: path) }
        try fileLock.withLock { fd, realPath in
            try state.withLock { state in
                try refresh(fd, &state)
                let before = state.history
                guard let changed = try change(before) else { return }
                state.history = changed
                do {
                    try write(to: realPath, &state)
                } catch {
                    state.history = before
                    throw error
                }
            }
        }
    }

    package func historyBounds() throws -> (first: Int64, last: Int64) {
        try fileLock.withLock(exclusive: false) { fd, _ in
            try state.withLock { state in
                try refresh(fd, &state)
                guard state.history != nil || state.retention != nil else { throw HistoryError.notTracked }
                let history = state.history ?? HistoryList()
                return (history.start, history.last)
            }
        }
    }

    package func history(after number: Int64?, since date: Date?) throws -> [HistoryTransaction] {
        try fileLock.withLock(exclusive: false) { fd, _ in
            try state.withLock { state in
                try refresh(fd, &state)
                guard state.history != nil || state.retention != nil else { throw HistoryError.notTracked }
                let history = state.history ?? HistoryList()
                let found = try history.after(number ?? history.start - 1, storeIdentifier: identifierLocked(state))
                return date.map { date in found.filter { $0.timestamp > date } } ?? found
            }
        }
    }

    package func deleteHistory(through number: Int64) throws {
        let tracking = state.withLock { $0.retention != nil }
        try changeHistory { current in
            guard var history = current else {
                if !tracking { throw HistoryError.notTracked }
                return nil
            }
            history.delete(through: number)
            return history.start != current?.start ? history : nil
        }
    }

    /// The history as the file holds it: the first number kept, then one transaction a
    /// line, each change with its values by property name as `[old, new]`.
    static func renderHistory(_ history: HistoryList, model: ManagedObjectModel) -> String {
        func slot(_ value: SlotValue) -> String {
            switch value {
            case .value(let value): return JSONText.encode(value)
            case .toOne(nil): return "null"
            case .toOne(let id?): return JSONText.quote("\(id.entityName)/\(id.primaryKey ?? 0)")
            case .toMany(let ids): return "[" + ids.map { JSONText.quote("\($0.entityName)/\($0.primaryKey ?? 0)") }.joined(separator: ", ") + "]"
            }
        }
        let lines = history.transactions.map { transaction in
            let changes = transaction.changes.map { change in
                let values = change.values.map { "\(JSONText.quote($0.name)): [\(slot($0.oldValue)), \(slot($0.newValue))]" }.joined(separator: ", ")
                return "{\"kind\": \(JSONText.quote(change.kind.rawValue)), \"object\": \(JSONText.quote("\(change.entityName)/\(change.objectID.primaryKey ?? 0)")), \"values\": {\(values)}}"
            }
            return "      {\"number\": \(transaction.number), \"timestamp\": \(JSONText.encode(.date(transaction.timestamp))), "
                + "\"author\": \(transaction.author.map(JSONText.quote) ?? "null"), \"context\": \(transaction.contextName.map(JSONText.quote) ?? "null"), "
                + "\"process\": \(transaction.processID), \"changes\": [\(changes.joined(separator: ", "))]}"
        }
        return "{\"start\": \(history.start), \"transactions\": [" + (lines.isEmpty ? "" : "\n" + lines.joined(separator: ",\n") + "\n    ") + "]}"
    }

    static func decodeHistory(_ node: JSONNode, model: ManagedObjectModel, storeIdentifier: String, path: String) throws -> HistoryList {
        func bad(_ at: JSONNode, _ message: String) -> StoreError {
            .corrupt(path: path, reason: "history: \(message) (line \(at.location.line), column \(at.location.column))")
        }
        func integer(_ node: JSONNode?, _ name: String, in parent: JSONNode) throws -> Int64 {
            guard let node, let text = node.numberText, let value = Int64(text) else { throw bad(node ?? parent, "\"\(name)\" must be an integer") }
            return value
        }
        func reference(_ value: JSONNode) throws -> ObjectID {
            guard let text = value.stringValue, let slash = text.lastIndex(of: "/"), let key = Int64(text[text.index(after: slash)...]), key >= 1,
                  model.entity(named: String(text[..<slash])) != nil
            else { throw bad(value, "a reference must be written \"Entity/key\"") }
            return ObjectID(entityName: String(text[..<slash]), storeIdentifier: storeIdentifier, key: .permanent(key))
        }
        func slot(_ value: JSONNode, _ property: PropertyDescription, _ name: String) throws -> SlotValue {
            switch property {
            case .attribute(let attribute):
                switch JSONText.decode(value, as: attribute.type) {
                case .success(let decoded): return .value(decoded)
                case .failure(let problem): throw bad(value, "\(name): \(problem.message)")
                }
            case .relationship(let relationship):
                if case .null = value.kind { return relationship.isToMany ? .toMany([]) : .toOne(nil) }
                if let items = value.elements { return .toMany(try items.map(reference)) }
                return .toOne(try reference(value))
            }
        }
        guard node.members != nil else { throw bad(node, "\"history\" must be an object") }
        var history = HistoryList()
        history.start = try integer(node["start"], "start", in: node)
        guard history.start >= 1 else { throw bad(node, "\"start\" must be 1 or more") }
        guard let items = node["transactions"]?.elements else { throw bad(node, "\"transactions\" must be an array") }
        for item in items {
            let number = try integer(item["number"], "number", in: item)
            guard number >= history.start, number > (history.transactions.last?.number ?? 0) else {
                throw bad(item, "transaction \(number) is out of order (numbers rise from \"start\")")
            }
            guard let stamp = item["timestamp"], case .success(.date(let timestamp)) = JSONText.decode(stamp, as: .date) else {
                throw bad(item, "transaction \(number) needs a \"timestamp\" date")
            }
            let process = try integer(item["process"], "process", in: item)
            var changes: [HistoryChange] = []
            for change in item["changes"]?.elements ?? [] {
                guard let kindText = change["kind"]?.stringValue, let kind = HistoryChange.Kind(rawValue: kindText) else {
                    throw bad(change, "a change's \"kind\" must be insert, update or delete")
                }
                guard let objectNode = change["object"] else { throw bad(change, "a change needs its \"object\"") }
                let id = try reference(objectNode)
                guard let entity = model.entity(named: id.entityName) else { throw bad(objectNode, "unknown entity") }
                var values: [PropertyChange] = []
                for member in change["values"]?.members ?? [] {
                    guard let index = entity.slot(of: member.key) else { throw bad(member.value, "\(entity.name) has no property \"\(member.key)\"") }
                    guard let pair = member.value.elements, pair.count == 2 else { throw bad(member.value, "\(member.key) must be [old, new]") }
                    let property = entity.properties[index]
                    values.append(PropertyChange(name: member.key, slot: index, oldValue: try slot(pair[0], property, member.key), newValue: try slot(pair[1], property, member.key)))
                }
                changes.append(HistoryChange(kind: kind, objectID: id, values: values.sorted { $0.slot < $1.slot }))
            }
            history.transactions.append(HistoryTransaction(
                number: number, storeIdentifier: storeIdentifier, timestamp: timestamp, author: item["author"]?.stringValue,
                contextName: item["context"]?.stringValue, processID: Int32(truncatingIfNeeded: process), changes: changes))
        }
        return history
    }
}
