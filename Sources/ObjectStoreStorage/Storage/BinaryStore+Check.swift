import Foundation
import ObjectStoreModel

// The storage-level integrity check: snapshot indexes against their checksums and rows.
extension BinaryStore {
    /// Every snapshot index checked against its checksum and against the snapshot's rows
    /// (the rows' own checksums are checked as they are read).
    package func storageProblems() throws -> [String] {
        try fileLock.withLock(exclusive: false) { fd, _ in
            try core.withLock { core in
                try core.refresh(fd)
                var problems: [String] = []
                // The history region, read only when history is asked for, is checked here too.
                do {
                    let entries = try core.historyEntries()
                    // Every transaction decodes (log and undo read them; a compaction copies them).
                    if let codec = core.state.codec {
                        let nextKeys = core.state.metadata?.nextKeys ?? [:]
                        for entry in entries {
                            do {
                                _ = try BinaryStore.readTransaction(core.bytes(of: entry), from: entry.offset, length: entry.length, codec: codec, model: model, nextKeys: nextKeys)
                            } catch {
                                problems.append("transaction \(entry.number) of the history does not decode; the objects are not damaged (dropHistoryThroughLastUndecodableTransaction(), taskctl store repair, drops the history up to it)")
                            }
                        }
                    }
                } catch let error as StoreError {
                    problems.append("the history is damaged (\(error)); the objects are not")
                }
                guard let snapshot = core.state.cache.snapshot, let codec = core.state.codec, let held = core.held else { return problems }
                let expected = try core.indexes(of: snapshot, codec: codec)
                for part in snapshot.indexes {
                    let owner = part.owner < codec.entityNames.count ? codec.entityNames[part.owner] : "entity \(part.owner)"
                    let isSchemaIndex = part.constraint & Snapshot.schemaIndexFlag != 0
                    let what = isSchemaIndex ? "schema index \((part.constraint & ~Snapshot.schemaIndexFlag) + 1)" : "constraint \(part.constraint + 1)"
                    // An index is made from the rows: a damaged one is a problem to report
                    // (compaction rebuilds it), not a store that cannot be read.
                    let stored: [(hash: UInt64, entity: Int, position: Int, key: Int64)]
                    do {
                        stored = try snapshot.indexEntries(part, fd: held.fd, path: path)
                    } catch let error as StoreError {
                        problems.append("the snapshot index of \(owner) (\(what)) is damaged (\(error)); compact the store to rebuild it")
                        continue
                    }
                    guard let built = expected.first(where: { $0.owner == part.owner && $0.constraint == part.constraint && $0.signature == part.signature }) else {
                        // A uniqueness index hashed as before the decomposed strings: not
                        // used (constraint checks scan), rebuilt by the next compaction.
                        if !isSchemaIndex, let entity = model.entity(named: owner), part.constraint < entity.uniquenessConstraints.count,
                           part.signature == BinaryStore.legacySignature(of: entity.uniquenessConstraints[part.constraint], in: entity) {
                            continue
                        }
                        problems.append("the snapshot has an index of \(owner) the model does not define (\(what)); it is not used")
                        continue
                    }
                    let matches: Bool
                    if let positions = built.positions {
                        // A schema index: its entries in their order, with the rows' positions.
                        matches = stored.count == positions.count && zip(stored, zip(built.entries, positions)).allSatisfy { stored, built in
                            stored.hash == built.0.hash && stored.entity == built.0.entity && stored.key == built.0.key && stored.position == built.1
                        }
                    } else {
                        // As much of each hash as the index keeps, in the order it keeps them.
                        let mask = part.hashMask
                        let order = { (a: (hash: UInt64, entity: Int, key: Int64), b: (hash: UInt64, entity: Int, key: Int64)) in (a.hash, a.entity, a.key) < (b.hash, b.entity, b.key) }
                        let expected = built.entries.map { (hash: $0.hash & mask, entity: $0.entity, key: $0.key) }.sorted(by: order)
                        matches = stored.map { ($0.hash, $0.entity, $0.key) }.elementsEqual(expected, by: { $0 == $1 })
                    }
                    if !matches {
                        problems.append("the snapshot index of \(owner) (\(what)) does not match its rows; compact the store to rebuild it")
                    }
                }
                // Every column (its checksum, when read) against its rows' values.
                for part in snapshot.columns {
                    let owner = part.entity < codec.entityNames.count ? codec.entityNames[part.entity] : "entity \(part.entity)"
                    let column = try snapshot.column(part, fd: held.fd, path: path)
                    guard let loaded = try core.loadedEntity(part.entity), let entity = model.entity(named: owner),
                          part.slot < entity.properties.count, let attribute = entity.properties[part.slot].attribute,
                          Column.Kind(attribute.type) == part.kind, attribute.isStored
                    else {
                        problems.append("the snapshot has a column of \(owner) (slot \(part.slot)) the model does not define; it is not used")
                        continue
                    }
                    for position in 0..<loaded.part.rowCount {
                        let (entry, start) = try loaded.row(at: position, path: path)
                        let id = codec.objectID(entity: part.entity, key: entry.key)
                        guard try core.decode(id, loaded.bytes, from: start, slots: [part.slot]) == [.value(column.value(at: position))] else {
                            problems.append("the snapshot column \(owner).\(attribute.name) does not match its rows; compact the store to rebuild it")
                            break
                        }
                    }
                }
                return problems
            }
        }
    }
}
