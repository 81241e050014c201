import Foundation
import ObjectStoreModel

/// How the binary store's encoded rows of one entity read as slots: the codec of the store's
/// entity table, and the initial values of the slots stores do not write (transient and
/// derived attributes). One per entity and store state, shared by every object read from it.
@usableFromInline package final class RowLayout {
    package let codec: RowCodec
    /// Initial values of the entity's slots.
    @usableFromInline package let initial: [SlotValue]
    /// Per slot, whether stores write it (the others read as their initial value).
    package let stored: [Bool]
    /// Each slot's blank (which sparse and typed rows leave out) and kind (typed rows).
    package let shape: RowCodec.Shape

    /// Whether rows of the entity may hold a list of objects (a stored to-many), whose
    /// length every read of a later slot would skip: such rows, when long, are read through
    /// their slots' positions (``IndexedRow``).
    let holdsLists: Bool

    package init(codec: RowCodec, entity: EntityDescription) {
        self.codec = codec
        self.initial = entity.properties.map(SlotValue.initial(for:))
        self.stored = entity.properties.map { $0.attribute?.isStored ?? true }
        self.holdsLists = entity.properties.contains { $0.relationship.map { $0.isToMany && !$0.isTransient && !$0.isDerivedFromInverse } ?? false }
        let shape = codec.shape(entity: codec.entityIndex[entity.name] ?? -1)
        self.shape = shape.count == entity.properties.count ? shape : RowCodec.Shape(blanks: entity.properties.map(SlotValue.blank(for:)))
    }

    @inlinable package var count: Int { initial.count }
}

/// The row layouts a reader (a context) uses: one per entity, shared by every row of it read
/// while the store's entity table and dictionary stay, made again when they change (a
/// compaction writes a new dictionary).
package final class RowLayouts {
    private var layouts: [ObjectIdentifier: RowLayout] = [:]

    package init() {}

    /// The layout of `entity`'s rows encoded with `codec`.
    func layout(_ entity: EntityDescription, codec: RowCodec) -> RowLayout {
        if let known = layouts[entity.identity], known.codec.isSame(as: codec) { return known }
        let made = RowLayout(codec: codec, entity: entity)
        layouts[entity.identity] = made
        return made
    }
}

/// A row of the binary store read in place: the bytes it lives in (a snapshot part or a
/// commit of the log, shared by every row read from them), where it starts, and its layout.
/// Made only for a row ``RowCodec/check(_:)`` accepted, so reading it cannot fail.
@usableFromInline package struct EncodedRow {
    package let bytes: [UInt8]
    package let start: Int
    @usableFromInline package let layout: RowLayout

    /// The row at `start` of `bytes` when it decodes with the layout's number of slots; nil
    /// when it has another number (rows of an entity whose slots changed read as initial
    /// values, as decoded ones do). Throws when it does not decode.
    package init?(bytes: [UInt8], start: Int, layout: RowLayout) throws {
        var end = start
        try self.init(bytes: bytes, start: start, layout: layout, end: &end)
    }

    /// The row, and in `end` where it ends.
    init?(bytes: [UInt8], start: Int, layout: RowLayout, end: inout Int) throws {
        var reader = ByteReader(bytes, from: start)
        guard try layout.codec.check(&reader, shape: layout.shape) == layout.count else { return nil }
        end = reader.position
        self.bytes = bytes
        self.start = start
        self.layout = layout
    }

    /// One slot's value: the bytes before it skipped, only its own decoded.
    @usableFromInline package func slot(_ index: Int) -> SlotValue {
        guard layout.stored[index] else { return layout.initial[index] }
        var reader = ByteReader(bytes, from: start)
        return (try? layout.codec.slot(index, from: &reader, shape: layout.shape)) ?? layout.initial[index]
    }

    /// Every slot decoded.
    @usableFromInline package func decoded() -> [SlotValue] {
        var reader = ByteReader(bytes, from: start)
        guard var slots = try? layout.codec.decode(from: &reader, shape: layout.shape), slots.count == layout.count else { return layout.initial }
        for (index, isStored) in layout.stored.enumerated() where !isStored { slots[index] = layout.initial[index] }
        return slots
    }

    /// Calls `body` with each slot's value in order, decoding the row once, until it
    /// returns false.
    package func forEachSlot(_ body: (Int, SlotValue) -> Bool) {
        var reader = ByteReader(bytes, from: start)
        try? layout.codec.forEachSlot(from: &reader, shape: layout.shape) { index, value in
            body(index, index < layout.count && !layout.stored[index] ? layout.initial[index] : value)
        }
    }

    /// Whether both read the same bytes.
    package func isSame(as other: EncodedRow) -> Bool {
        start == other.start && layout === other.layout && bytes.withUnsafeBufferPointer { a in
            other.bytes.withUnsafeBufferPointer { b in a.baseAddress == b.baseAddress && a.count == b.count }
        }
    }
}

/// A long row holding a list of objects (an owner's stored to-many), read in place through
/// where each slot starts: reading its name does not skip its list again. Without this, an
/// object reached through a to-one from each of 20,000 others (a department of its
/// employees) skipped its list of 20,000 at every read of an attribute after it.
@usableFromInline package final class IndexedRow {
    @usableFromInline let row: EncodedRow
    let positions: [Int]

    /// Rows shorter than this skip their few bytes faster than an array is made.
    static let minimumLength = 256

    init(row: EncodedRow, positions: [Int]) {
        self.row = row
        self.positions = positions
    }

    @usableFromInline func slot(_ index: Int) -> SlotValue {
        let layout = row.layout
        guard layout.stored[index] else { return layout.initial[index] }
        guard index < positions.count, positions[index] >= 0 else { return row.slot(index) }
        var reader = ByteReader(row.bytes, from: row.start)
        return (try? layout.codec.slot(index, at: positions[index], from: &reader, shape: layout.shape)) ?? layout.initial[index]
    }
}

/// An object's values, one per slot of its entity: decoded in an array, or read in place
/// from the store's encoded row until the first write (which decodes them all). A clean
/// object loaded from the binary store so holds no decoded value (docs/ARCHITECTURE.md,
/// "Objects read from the store's rows").
@usableFromInline package struct Slots: RandomAccessCollection, MutableCollection, ExpressibleByArrayLiteral {
    /// Decoded values, or the encoded row they are read from: one or the other, so the
    /// value takes 24 bytes (an object holds two: its values and its committed ones).
    @usableFromInline enum Storage {
        case decoded([SlotValue])
        case encoded(EncodedRow)
        case indexed(IndexedRow)
    }
    @usableFromInline var storage: Storage

    @inlinable package init(_ values: [SlotValue] = []) {
        storage = .decoded(values)
    }

    @inlinable package init(arrayLiteral elements: SlotValue...) {
        self.init(elements)
    }

    @inlinable package init(row: EncodedRow) {
        storage = .encoded(row)
    }

    /// The values of the row at `start` of `bytes`, read in place; a row with another
    /// number of slots than the layout reads as the initial values (as a decoded one does).
    /// Throws when the row does not decode.
    package static func inPlace(_ bytes: [UInt8], start: Int, layout: RowLayout) throws -> Slots {
        var end = start
        guard let row = try EncodedRow(bytes: bytes, start: start, layout: layout, end: &end) else { return Slots(layout.initial) }
        // Only a long row of an entity with lists is read again for its slots' positions
        // (noting them for every row made an array per row a scan read).
        guard layout.holdsLists, end - start >= IndexedRow.minimumLength else { return Slots(row: row) }
        var positions: [Int]? = []
        var reader = ByteReader(bytes, from: start)
        _ = try layout.codec.check(&reader, shape: layout.shape, positions: &positions)
        guard let positions else { return Slots(row: row) }
        return Slots(storage: .indexed(IndexedRow(row: row, positions: positions)))
    }

    @inlinable init(storage: Storage) {
        self.storage = storage
    }

    /// The values as an array (decoded from the row when it is encoded). Changed in place
    /// (a fetch decodes a row's wanted slots into them), which makes them decoded.
    @inlinable package var values: [SlotValue] {
        get {
            switch storage {
            case .decoded(let values): return values
            case .encoded(let row): return row.decoded()
            case .indexed(let indexed): return indexed.row.decoded()
            }
        }
        _modify {
            var values: [SlotValue]
            switch storage {
            case .decoded(let decoded): values = decoded
            case .encoded(let row): values = row.decoded()
            case .indexed(let indexed): values = indexed.row.decoded()
            }
            storage = .decoded([])  // let go of the array, so it is changed in place
            defer { storage = .decoded(values) }
            yield &values
        }
    }

    /// The encoded row the values are read from, until a write decodes them.
    @inlinable package var row: EncodedRow? {
        switch storage {
        case .decoded: return nil
        case .encoded(let row): return row
        case .indexed(let indexed): return indexed.row
        }
    }

    @inlinable package var startIndex: Int { 0 }
    @inlinable package var endIndex: Int {
        @inline(__always) get {
            switch storage {
            case .decoded(let values): return values.count
            case .encoded(let row): return row.layout.count
            case .indexed(let indexed): return indexed.row.layout.count
            }
        }
    }

    @inlinable package subscript(index: Int) -> SlotValue {
        @inline(__always) get {
            switch storage {
            case .decoded(let values): return values[index]
            case .encoded(let row): return row.slot(index)
            case .indexed(let indexed): return indexed.slot(index)
            }
        }
        set {
            values[index] = newValue  // decodes an encoded row first
        }
    }

    /// Whether these values pass `predicate`, read where they are (a method of the values,
    /// so an object's are borrowed, not copied, for the test).
    @inlinable package func satisfy(_ predicate: SlotPredicate) throws -> Bool {
        switch storage {
        case .decoded(let values): return try predicate.matches(reading: values)
        case .encoded, .indexed: return try predicate.matches(reading: self)
        }
    }

    /// Whether these values pass `test`, read where they are (as for a bare predicate).
    @inlinable package func satisfy(_ test: SlotTest) throws -> Bool {
        switch storage {
        case .decoded(let values): return try test.matches(values)
        case .encoded, .indexed: return try test.predicate.matches(reading: self)
        }
    }

    /// Whether the values are read from an encoded row.
    @inlinable package var isEncoded: Bool { row != nil }

    /// Decodes the row's values (nothing when they are decoded).
    package mutating func decode() {
        guard let row else { return }
        storage = .decoded(row.decoded())
    }

    /// Whether these read the very row `other` reads, or share its decoded array (as an
    /// object's values and its committed ones do after a save): then no slot differs.
    package func isSameStorage(as other: Slots) -> Bool {
        if let row, let otherRow = other.row { return row.isSame(as: otherRow) }
        switch (storage, other.storage) {
        case (.decoded(let values), .decoded(let otherValues)):
            guard !values.isEmpty, values.count == otherValues.count else { return false }
            return values.withUnsafeBufferPointer { a in otherValues.withUnsafeBufferPointer { b in a.baseAddress == b.baseAddress } }
        default:
            return false
        }
    }
}
