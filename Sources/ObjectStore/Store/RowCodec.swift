import Foundation
import ObjectStoreModel

/// The binary encoding of slots (docs/store-format.md, "Slots"): one tag byte per slot,
/// then the value. Relationship targets are written as an entity-table index and a key.
/// A sparse row (format 5) leaves out the slots that hold their blank (nil, no object, no
/// objects): a bitmap says which it holds.
struct RowCodec {
    /// Entity names in table order.
    let entityNames: [String]
    let entityIndex: [String: Int]
    let storeIdentifier: String
    /// The ID scope of each entity, so decoding a reference makes an ID without a lookup.
    let scopes: [ObjectID.Scope]
    /// Entity-table indexes by scope (scopes are shared), so writing a reference hashes a
    /// pointer, not the entity's name.
    private let scopeIndex: [ObjectIdentifier: Int]
    /// Per entity-table index, each slot's blank (``SlotValue/blank(for:)``) as the model
    /// says, which a sparse row leaves out; empty for an entity the model does not have.
    let blanks: [[SlotValue]]

    init(entityNames: [String], storeIdentifier: String, model: ManagedObjectModel? = nil) {
        self.entityNames = entityNames
        var index: [String: Int] = [:]
        for (i, name) in entityNames.enumerated() { index[name] = i }
        self.entityIndex = index
        self.storeIdentifier = storeIdentifier
        self.scopes = entityNames.map { ObjectID.Scope.of(entityName: $0, storeIdentifier: storeIdentifier) }
        var byScope: [ObjectIdentifier: Int] = [:]
        for (i, scope) in scopes.enumerated() { byScope[ObjectIdentifier(scope)] = i }
        self.scopeIndex = byScope
        self.blanks = entityNames.map { name in model?.entity(named: name)?.properties.map(SlotValue.blank(for:)) ?? [] }
    }

    /// The blanks of the slots of the entity at `index` in the entity table (empty when unknown).
    func blanks(entity index: Int) -> [SlotValue] {
        index >= 0 && index < blanks.count ? blanks[index] : []
    }

    /// The ID of an object of the entity at `index` (in the entity table).
    func objectID(entity index: Int, key: Int64) -> ObjectID {
        ObjectID(scopes[index], key: .permanent(key))
    }

    /// The entity-table index of an ID's entity.
    func entityIndex(of id: ObjectID) -> Int? {
        scopeIndex[ObjectIdentifier(id.scope)] ?? entityIndex[id.entityName]
    }

    /// The ID of an object of a named entity.
    func objectID(entity name: String, key: Int64) -> ObjectID {
        entityIndex[name].map { objectID(entity: $0, key: key) } ?? ObjectID(entityName: name, storeIdentifier: storeIdentifier, key: .permanent(key))
    }

    enum Tag: UInt8 {
        case null = 0, falseValue, trueValue, integer, double, decimal, string, date, data, uuid, uri, toOneNil, toOne, toMany
        /// A date at a whole second: its seconds since 2001 as a zigzag varint (5 bytes for
        /// this century's dates instead of a Double's 8; format 4).
        case wholeSecondDate
        /// A to-many relationship to objects of one entity in ascending key order (format
        /// 5): the count, the entity index once, the first key, then each key's distance
        /// from the one before.
        case ascendingToMany
    }

    struct UnknownEntity: Error { let name: String }

    /// Every slot, tagged (as rows before format 5, and as uniqueness values are hashed).
    func encode(_ slots: [SlotValue], into writer: inout ByteWriter) throws {
        writer.varint(UInt64(slots.count))
        for slot in slots { try encode(slot, into: &writer) }
    }

    /// A row: sparse when `blanks` has a blank for each slot (format 5), else every slot tagged.
    func encodeRow(_ slots: [SlotValue], blanks: [SlotValue], into writer: inout ByteWriter) throws {
        guard !blanks.isEmpty, blanks.count == slots.count else { return try encode(slots, into: &writer) }
        Self.writeSparseCount(slots.count, into: &writer)
        let bitmap = writer.bytes.count
        writer.bytes.append(contentsOf: repeatElement(0, count: (slots.count + 7) / 8))
        for (index, slot) in slots.enumerated() where slot != blanks[index] {
            writer.bytes[bitmap + index >> 3] |= 1 << UInt8(index & 7)
            try encode(slot, into: &writer, ascendingLists: true)
        }
    }

    /// A sparse row's slot count: a varint with one more, empty, group (`0x92 0x00` for 18),
    /// which a canonical varint (every count before format 5) never ends with.
    private static func writeSparseCount(_ count: Int, into writer: inout ByteWriter) {
        writer.varint(UInt64(count))
        writer.bytes[writer.bytes.count - 1] |= 0x80
        writer.u8(0)
    }

    /// The row at `start` of `bytes` as a sparse row (the same slots, without their blanks),
    /// appended to `writer`, without decoding its values; a row that is sparse already, or
    /// whose slot count is not the blanks', is copied as it is. Returns its length.
    func appendSparse(_ bytes: [UInt8], from start: Int, blanks: [SlotValue], to writer: inout ByteWriter) throws -> Int {
        var reader = ByteReader(bytes, from: start)
        let head = try self.head(&reader)
        let begin = writer.bytes.count
        guard head.bitmap == nil, !blanks.isEmpty, head.count == blanks.count else {
            reader.position = start
            try skipRow(&reader)
            writer.bytes.append(contentsOf: bytes[start..<reader.position])
            return reader.position - start
        }
        Self.writeSparseCount(head.count, into: &writer)
        let bitmap = writer.bytes.count
        writer.bytes.append(contentsOf: repeatElement(0, count: (head.count + 7) / 8))
        for index in 0..<head.count {
            let from = reader.position
            let tag = bytes[from]
            try skip(&reader)
            // A blank's tag (and an empty list's count) of the slot's own kind is left out.
            let isBlank: Bool
            switch blanks[index] {
            case .value: isBlank = tag == Tag.null.rawValue
            case .toOne: isBlank = tag == Tag.toOneNil.rawValue
            case .toMany: isBlank = tag == Tag.toMany.rawValue && reader.position - from == 2
            }
            guard !isBlank else { continue }
            writer.bytes[bitmap + index >> 3] |= 1 << UInt8(index & 7)
            // A list of two or more is written as its key distances when it can be.
            if tag == Tag.toMany.rawValue, reader.position - from > 2 {
                var list = ByteReader(bytes, from: from)
                if case .toMany(let ids) = try slot(from: &list), try ascending(ids, into: &writer) { continue }
            }
            writer.bytes.append(contentsOf: bytes[from..<reader.position])
        }
        return writer.bytes.count - begin
    }

    /// One slot, tagged; with `ascendingLists`, a to-many list of one entity's objects in
    /// ascending key order as its key distances (rows of format 5; values hashed for
    /// uniqueness keep the tags they always had).
    private func encode(_ slot: SlotValue, into writer: inout ByteWriter, ascendingLists: Bool = false) throws {
        switch slot {
        case .value(let value): encode(value, into: &writer)
        case .toOne(nil): writer.u8(Tag.toOneNil.rawValue)
        case .toOne(let id?):
            writer.u8(Tag.toOne.rawValue)
            try reference(id, into: &writer)
        case .toMany(let ids):
            if ascendingLists, try ascending(ids, into: &writer) { return }
            writer.u8(Tag.toMany.rawValue)
            writer.varint(UInt64(ids.count))
            for id in ids { try reference(id, into: &writer) }
        }
    }

    /// Writes a list of references as ``Tag/ascendingToMany`` when they are two or more, of
    /// one entity, in ascending key order; false (nothing written) otherwise.
    private func ascending(_ ids: [ObjectID], into writer: inout ByteWriter) throws -> Bool {
        guard ids.count >= 2, let first = ids.first, let entity = entityIndex(of: first), var previous = first.primaryKey else { return false }
        for id in ids.dropFirst() {
            guard id.scope === first.scope, let key = id.primaryKey, key > previous else { return false }
            previous = key
        }
        writer.u8(Tag.ascendingToMany.rawValue)
        writer.varint(UInt64(ids.count))
        writer.varint(UInt64(entity))
        previous = first.primaryKey ?? 0
        writer.signed(previous)
        for id in ids.dropFirst() {
            let key = id.primaryKey ?? 0
            writer.varint(UInt64(key &- previous))
            previous = key
        }
        return true
    }

    private func reference(_ id: ObjectID, into writer: inout ByteWriter) throws {
        guard let entity = entityIndex(of: id), let key = id.primaryKey else { throw UnknownEntity(name: id.entityName) }
        writer.varint(UInt64(entity))
        writer.signed(key)
    }

    private func encode(_ value: Value, into writer: inout ByteWriter) {
        switch value {
        case .null: writer.u8(Tag.null.rawValue)
        case .bool(let b): writer.u8(b ? Tag.trueValue.rawValue : Tag.falseValue.rawValue)
        case .integer(let i):
            writer.u8(Tag.integer.rawValue)
            writer.signed(i)
        case .double(let d):
            writer.u8(Tag.double.rawValue)
            writer.u64(d.bitPattern)
        case .decimal(let d):
            writer.u8(Tag.decimal.rawValue)
            writer.string(d.description)
        case .string(let s):
            writer.u8(Tag.string.rawValue)
            writer.string(s)
        case .date(let d):
            let seconds = d.timeIntervalSinceReferenceDate
            // Only when the whole number reads back as the very same Double (not -0.0), and
            // its varint is shorter than 8 bytes (every date of the years 0001-9999 is).
            if let whole = seconds.exactWholeNumber, whole.magnitude < 1 << 48 {
                writer.u8(Tag.wholeSecondDate.rawValue)
                writer.signed(whole)
            } else {
                writer.u8(Tag.date.rawValue)
                writer.u64(seconds.bitPattern)
            }
        case .data(let d):
            writer.u8(Tag.data.rawValue)
            writer.blob(Array(d))
        case .uuid(let u):
            writer.u8(Tag.uuid.rawValue)
            withUnsafeBytes(of: u.uuid) { writer.bytes.append(contentsOf: $0) }
        case .uri(let u):
            writer.u8(Tag.uri.rawValue)
            writer.string(u.absoluteString)
        }
    }

    /// The start of a row: its number of slots and, for a sparse row, where its bitmap is.
    struct Head {
        var count: Int
        /// Nil: every slot follows, tagged.
        var bitmap: Int?
        /// The bitmap's first 64 bits (all set for a row that is not sparse).
        var first: UInt64 = ~0
        /// The bytes of a sparse row of more than 64 slots (for the bits past the first 64).
        var wide: [UInt8]? = nil

        /// Whether the row holds slot `index` (a sparse row's bitmap has its bit).
        @inline(__always)
        func holds(_ index: Int) -> Bool {
            if index < 64 { return first >> UInt64(index) & 1 != 0 }
            guard let bitmap, let wide else { return true }
            return wide[bitmap + index >> 3] & (1 << UInt8(index & 7)) != 0
        }

        /// How many of the slots before `index` the row holds.
        func held(before index: Int) -> Int {
            guard bitmap != nil else { return index }
            if index <= 64 { return (index == 64 ? first : first & (1 << UInt64(index) &- 1)).nonzeroBitCount }
            return first.nonzeroBitCount + (64..<index).reduce(0) { $0 + (holds($1) ? 1 : 0) }
        }
    }

    /// Reads a row's count (and a sparse row's bitmap), leaving the reader at its first value.
    func head(_ reader: inout ByteReader) throws -> Head {
        var raw: UInt64 = 0, shift: UInt64 = 0, groups = 0, last: UInt8 = 0
        repeat {
            last = try reader.u8()
            guard shift < 64 else { throw ByteReader.Truncated() }
            raw |= UInt64(last & 0x7F) << shift
            shift += 7
            groups += 1
        } while last & 0x80 != 0
        guard raw <= UInt64(reader.end - reader.position) + 1_000_000, let count = Int(exactly: raw) else { throw ByteReader.Truncated() }
        guard groups > 1, last == 0 else { return Head(count: count, bitmap: nil) }
        let bitmap = reader.position, size = (count + 7) / 8
        guard reader.end - bitmap >= size else { throw ByteReader.Truncated() }
        // No bit past the last slot.
        guard count % 8 == 0 || reader.bytes[bitmap + count / 8] >> UInt8(count % 8) == 0 else { throw ByteReader.Truncated() }
        var first: UInt64 = 0
        for k in 0..<min(size, 8) { first |= UInt64(reader.bytes[bitmap + k]) << UInt64(8 * k) }
        reader.position += size
        return Head(count: count, bitmap: bitmap, first: first, wide: count > 64 ? reader.bytes : nil)
    }

    /// ``head(_:)``, for decoding with the entity's `blanks`: a sparse row has as many slots.
    private func head(_ reader: inout ByteReader, blanks: [SlotValue]) throws -> Head {
        let head = try head(&reader)
        if head.bitmap != nil, head.count != blanks.count { throw ByteReader.Truncated() }
        return head
    }

    /// A blank the row leaves out: the slot's own, or a sparse row of another shape is damage.
    private func blank(_ index: Int, _ blanks: [SlotValue]) throws -> SlotValue {
        guard index < blanks.count else { throw ByteReader.Truncated() }
        return blanks[index]
    }

    /// Every slot of the row at the reader; `blanks` are the entity's (for a sparse row).
    func decode(from reader: inout ByteReader, blanks: [SlotValue]) throws -> [SlotValue] {
        let head = try head(&reader, blanks: blanks)
        var slots: [SlotValue] = []
        slots.reserveCapacity(min(head.count, 4096))
        for index in 0..<head.count {
            slots.append(head.holds(index) ? try slot(from: &reader) : try blank(index, blanks))
        }
        return slots
    }

    /// The value of slot `index` of the row at the reader, the slots before it skipped.
    func slot(_ index: Int, from reader: inout ByteReader, blanks: [SlotValue]) throws -> SlotValue {
        let head = try head(&reader, blanks: blanks)
        guard index < head.count else { return .value(.null) }
        guard head.holds(index) else { return try blank(index, blanks) }
        for _ in 0..<head.held(before: index) { try skip(&reader) }
        return try slot(from: &reader)
    }

    /// Calls `body` with each slot's value in order, decoding the row once, until it returns
    /// false.
    func forEachSlot(from reader: inout ByteReader, blanks: [SlotValue], _ body: (Int, SlotValue) -> Bool) throws {
        let head = try head(&reader, blanks: blanks)
        for index in 0..<head.count {
            let value = head.holds(index) ? try slot(from: &reader) : try blank(index, blanks)
            if !body(index, value) { return }
        }
    }

    /// Checks that the row at the reader decodes, without making its values (a row read in
    /// place later, slot by slot, must not fail then); returns its number of slots. A sparse
    /// row must have as many slots as `blanks`.
    func check(_ reader: inout ByteReader, blanks: [SlotValue]) throws -> Int {
        let head = try head(&reader, blanks: blanks)
        for index in 0..<head.count where head.holds(index) {
            let start = reader.position
            guard let tag = Tag(rawValue: try reader.u8()) else { throw ByteReader.Truncated() }
            switch tag {
            case .string: try reader.skipString()
            case .decimal, .uri, .date, .toOne, .toMany, .ascendingToMany:
                // Values whose decoding checks more than their length.
                reader.position = start
                _ = try slot(from: &reader)
            default:
                reader.position = start
                try skip(&reader)
            }
        }
        return head.count
    }

    /// One slot's value.
    func slot(from reader: inout ByteReader) throws -> SlotValue {
        guard let tag = Tag(rawValue: try reader.u8()) else { throw ByteReader.Truncated() }
        switch tag {
        case .null: return .value(.null)
        case .falseValue: return .value(.bool(false))
        case .trueValue: return .value(.bool(true))
        case .integer: return .value(.integer(try reader.signed()))
        case .double: return .value(.double(Double(bitPattern: try reader.u64())))
        case .decimal:
            guard let d = DecimalText.parse(try reader.string()) else { throw ByteReader.Truncated() }
            return .value(.decimal(d))
        case .string: return .value(.string(try reader.string()))
        case .date:
            let seconds = Double(bitPattern: try reader.u64())
            guard seconds.isFinite else { throw ByteReader.Truncated() }  // no date is NaN or infinite
            return .value(.date(Date(timeIntervalSinceReferenceDate: seconds)))
        case .wholeSecondDate: return .value(.date(Date(timeIntervalSinceReferenceDate: Double(try reader.signed()))))
        case .data: return .value(.data(Data(try reader.blob())))
        case .uuid:
            // Read in place (an array per UUID was most of decoding one).
            var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            try withUnsafeMutableBytes(of: &raw) { target in
                for k in 0..<16 { target[k] = try reader.u8() }
            }
            return .value(.uuid(UUID(uuid: raw)))
        case .uri:
            guard let url = URL(string: try reader.string()) else { throw ByteReader.Truncated() }
            return .value(.uri(url))
        case .toOneNil: return .toOne(nil)
        case .toOne: return .toOne(try reference(from: &reader))
        case .toMany:
            let n = try reader.count()
            var ids: [ObjectID] = []
            ids.reserveCapacity(min(n, 4096))
            for _ in 0..<n { ids.append(try reference(from: &reader)) }
            return .toMany(ids)
        case .ascendingToMany:
            let n = try reader.count()
            let index = try reader.count()
            guard n >= 2, index < entityNames.count else { throw ByteReader.Truncated() }
            var key = try reader.signed()
            var ids: [ObjectID] = []
            ids.reserveCapacity(min(n, 4096))
            ids.append(ObjectID(scopes[index], key: .permanent(key)))
            for _ in 1..<n {
                let step = try reader.varint()
                // Ascending, and no key past Int64's range.
                guard step > 0, step <= UInt64(Int64.max), key <= Int64.max - Int64(step) else { throw ByteReader.Truncated() }
                key += Int64(step)
                ids.append(ObjectID(scopes[index], key: .permanent(key)))
            }
            return .toMany(ids)
        }
    }

    /// Decodes only the wanted slots (sorted indices), skipping the others' bytes without
    /// making values of them.
    func decode(slots wanted: [Int], from reader: inout ByteReader, blanks: [SlotValue]) throws -> [SlotValue] {
        let head = try head(&reader, blanks: blanks)
        var result: [SlotValue] = []
        result.reserveCapacity(wanted.count)
        var next = 0
        for index in 0..<head.count {
            guard next < wanted.count else { break }
            let held = head.holds(index)
            if index == wanted[next] {
                result.append(held ? try slot(from: &reader) : try blank(index, blanks))
                next += 1
            } else if held {
                try skip(&reader)
            }
        }
        while result.count < wanted.count { result.append(.value(.null)) }
        return result
    }

    /// Decodes the slots `wanted` marks into `slots` (which has one entry per slot),
    /// skipping the others; a row with fewer slots leaves the rest as they are.
    func decode(into slots: inout [SlotValue], wanted: [Bool], from reader: inout ByteReader, blanks: [SlotValue]) throws {
        let head = try head(&reader, blanks: blanks)
        for index in 0..<head.count {
            let held = head.holds(index)
            if index < wanted.count, wanted[index], index < slots.count {
                slots[index] = held ? try slot(from: &reader) : try blank(index, blanks)
            } else if held {
                try skip(&reader)
            }
        }
    }

    /// Moves past a whole row of slots.
    func skipRow(_ reader: inout ByteReader) throws {
        let head = try head(&reader)
        for index in 0..<head.count where head.holds(index) { try skip(&reader) }
    }

    /// Moves past one slot.
    private func skip(_ reader: inout ByteReader) throws {
        guard let tag = Tag(rawValue: try reader.u8()) else { throw ByteReader.Truncated() }
        switch tag {
        case .null, .falseValue, .trueValue, .toOneNil: break
        case .integer, .wholeSecondDate: _ = try reader.varint()
        case .double, .date: _ = try reader.u64()
        case .decimal, .string, .data, .uri: _ = try reader.blob()
        case .uuid: for _ in 0..<16 { _ = try reader.u8() }
        case .toOne:
            _ = try reader.varint()
            _ = try reader.varint()
        case .toMany:
            for _ in 0..<(try reader.count()) {
                _ = try reader.varint()
                _ = try reader.varint()
            }
        case .ascendingToMany:
            let n = try reader.count()
            _ = try reader.varint()
            for _ in 0..<max(1, n) { _ = try reader.varint() }
        }
    }

    func reference(from reader: inout ByteReader) throws -> ObjectID {
        let index = try reader.count()
        guard index < entityNames.count else { throw ByteReader.Truncated() }
        return ObjectID(scopes[index], key: .permanent(try reader.signed()))
    }
}
