import Foundation
import ObjectStoreModel

/// How the binary store's encoded rows of one entity read as slots: the codec of the store's
/// entity table, and the initial values of the slots stores do not write (transient and
/// derived attributes). One per entity and store state, shared by every object read from it.
final class RowLayout {
    let codec: RowCodec
    /// Initial values of the entity's slots.
    let initial: [SlotValue]
    /// Per slot, whether stores write it (the others read as their initial value).
    let stored: [Bool]

    init(codec: RowCodec, entity: EntityDescription) {
        self.codec = codec
        self.initial = entity.properties.map(SlotValue.initial(for:))
        self.stored = entity.properties.map { $0.attribute?.isStored ?? true }
    }

    var count: Int { initial.count }
}

/// A row of the binary store read in place: the bytes it lives in (a snapshot part or a
/// commit of the log, shared by every row read from them), where it starts, and its layout.
/// Made only for a row ``RowCodec/check(_:)`` accepted, so reading it cannot fail.
struct EncodedRow {
    let bytes: [UInt8]
    let start: Int
    let layout: RowLayout

    /// The row at `start` of `bytes` when it decodes with the layout's number of slots; nil
    /// when it has another number (rows of an entity whose slots changed read as initial
    /// values, as decoded ones do). Throws when it does not decode.
    init?(bytes: [UInt8], start: Int, layout: RowLayout) throws {
        var reader = ByteReader(bytes, from: start)
        guard try layout.codec.check(&reader) == layout.count else { return nil }
        self.bytes = bytes
        self.start = start
        self.layout = layout
    }

    /// One slot's value: the bytes before it skipped, only its own decoded.
    func slot(_ index: Int) -> SlotValue {
        guard layout.stored[index] else { return layout.initial[index] }
        var reader = ByteReader(bytes, from: start)
        return (try? layout.codec.slot(index, from: &reader)) ?? layout.initial[index]
    }

    /// Every slot decoded.
    func decoded() -> [SlotValue] {
        var reader = ByteReader(bytes, from: start)
        guard var slots = try? layout.codec.decode(from: &reader), slots.count == layout.count else { return layout.initial }
        for (index, isStored) in layout.stored.enumerated() where !isStored { slots[index] = layout.initial[index] }
        return slots
    }

    /// Calls `body` with each slot's value in order, decoding the row once, until it
    /// returns false.
    func forEachSlot(_ body: (Int, SlotValue) -> Bool) {
        var reader = ByteReader(bytes, from: start)
        guard let count = try? reader.count() else { return }
        for index in 0..<count {
            guard let value = try? layout.codec.slot(from: &reader) else { return }
            if !body(index, index < layout.count && !layout.stored[index] ? layout.initial[index] : value) { return }
        }
    }

    /// Whether both read the same bytes.
    func isSame(as other: EncodedRow) -> Bool {
        start == other.start && layout === other.layout && bytes.withUnsafeBufferPointer { a in
            other.bytes.withUnsafeBufferPointer { b in a.baseAddress == b.baseAddress && a.count == b.count }
        }
    }
}

/// An object's values, one per slot of its entity: decoded in an array, or read in place
/// from the store's encoded row until the first write (which decodes them all). A clean
/// object loaded from the binary store so holds no decoded value (docs/ARCHITECTURE.md,
/// "Objects read from the store's rows").
struct Slots: RandomAccessCollection, MutableCollection, ExpressibleByArrayLiteral {
    /// The decoded values; empty while `row` is set.
    var values: [SlotValue]
    /// The encoded row the values are read from, until a write decodes them.
    private(set) var row: EncodedRow?

    init(_ values: [SlotValue] = []) {
        self.values = values
        self.row = nil
    }

    init(arrayLiteral elements: SlotValue...) {
        self.init(elements)
    }

    init(row: EncodedRow) {
        self.values = []
        self.row = row
    }

    /// The values of the row at `start` of `bytes`, read in place; a row with another
    /// number of slots than the layout reads as the initial values (as a decoded one does).
    /// Throws when the row does not decode.
    static func inPlace(_ bytes: [UInt8], start: Int, layout: RowLayout) throws -> Slots {
        guard let row = try EncodedRow(bytes: bytes, start: start, layout: layout) else { return Slots(layout.initial) }
        return Slots(row: row)
    }

    var startIndex: Int { 0 }
    var endIndex: Int { row?.layout.count ?? values.count }

    subscript(index: Int) -> SlotValue {
        get {
            if let row { return row.slot(index) }
            return values[index]
        }
        set {
            decode()
            values[index] = newValue
        }
    }

    /// Whether the values are read from an encoded row.
    var isEncoded: Bool { row != nil }

    /// Decodes the row's values into `values` (nothing when they are decoded).
    mutating func decode() {
        guard let row else { return }
        values = row.decoded()
        self.row = nil
    }

    /// The values as an array (decoded from the row when it is encoded).
    var array: [SlotValue] { row?.decoded() ?? values }

    /// Whether these read the very row `other` reads, or share its decoded array (as an
    /// object's values and its committed ones do after a save): then no slot differs.
    func isSameStorage(as other: Slots) -> Bool {
        if let row {
            guard let otherRow = other.row else { return false }
            return row.isSame(as: otherRow)
        }
        guard other.row == nil, !values.isEmpty, values.count == other.values.count else { return false }
        return values.withUnsafeBufferPointer { a in other.values.withUnsafeBufferPointer { b in a.baseAddress == b.baseAddress } }
    }
}
