import Foundation
import ObjectStoreModel

/// The binary encoding of slots (docs/store-format.md, "Slots"): one tag byte per slot,
/// then the value. Relationship targets are written as an entity-table index and a key.
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

    init(entityNames: [String], storeIdentifier: String) {
        self.entityNames = entityNames
        var index: [String: Int] = [:]
        for (i, name) in entityNames.enumerated() { index[name] = i }
        self.entityIndex = index
        self.storeIdentifier = storeIdentifier
        self.scopes = entityNames.map { ObjectID.Scope.of(entityName: $0, storeIdentifier: storeIdentifier) }
        var byScope: [ObjectIdentifier: Int] = [:]
        for (i, scope) in scopes.enumerated() { byScope[ObjectIdentifier(scope)] = i }
        self.scopeIndex = byScope
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
    }

    struct UnknownEntity: Error { let name: String }

    func encode(_ slots: [SlotValue], into writer: inout ByteWriter) throws {
        writer.varint(UInt64(slots.count))
        for slot in slots {
            switch slot {
            case .value(let value): encode(value, into: &writer)
            case .toOne(nil): writer.u8(Tag.toOneNil.rawValue)
            case .toOne(let id?):
                writer.u8(Tag.toOne.rawValue)
                try reference(id, into: &writer)
            case .toMany(let ids):
                writer.u8(Tag.toMany.rawValue)
                writer.varint(UInt64(ids.count))
                for id in ids { try reference(id, into: &writer) }
            }
        }
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

    func decode(from reader: inout ByteReader) throws -> [SlotValue] {
        let count = try reader.count()
        var slots: [SlotValue] = []
        slots.reserveCapacity(min(count, 4096))
        for _ in 0..<count { slots.append(try slot(from: &reader)) }
        return slots
    }

    /// The value of slot `index` of the row at the reader, the slots before it skipped.
    func slot(_ index: Int, from reader: inout ByteReader) throws -> SlotValue {
        let count = try reader.count()
        guard index < count else { return .value(.null) }
        for _ in 0..<index { try skip(&reader) }
        return try slot(from: &reader)
    }

    /// Checks that the row at the reader decodes, without making its values (a row read in
    /// place later, slot by slot, must not fail then); returns its number of slots.
    func check(_ reader: inout ByteReader) throws -> Int {
        let count = try reader.count()
        for _ in 0..<count {
            let start = reader.position
            guard let tag = Tag(rawValue: try reader.u8()) else { throw ByteReader.Truncated() }
            switch tag {
            case .string: try reader.skipString()
            case .decimal, .uri, .date, .toOne, .toMany:
                // Values whose decoding checks more than their length.
                reader.position = start
                _ = try slot(from: &reader)
            default:
                reader.position = start
                try skip(&reader)
            }
        }
        return count
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
        }
    }

    /// Decodes only the wanted slots (sorted indices), skipping the others' bytes without
    /// making values of them.
    func decode(slots wanted: [Int], from reader: inout ByteReader) throws -> [SlotValue] {
        let count = try reader.count()
        var result: [SlotValue] = []
        result.reserveCapacity(wanted.count)
        var next = 0
        for index in 0..<count {
            guard next < wanted.count else { break }
            if index == wanted[next] {
                result.append(try slot(from: &reader))
                next += 1
            } else {
                try skip(&reader)
            }
        }
        while result.count < wanted.count { result.append(.value(.null)) }
        return result
    }

    /// Decodes the slots `wanted` marks into `slots` (which has one entry per slot),
    /// skipping the others; a row with fewer slots leaves the rest as they are.
    func decode(into slots: inout [SlotValue], wanted: [Bool], from reader: inout ByteReader) throws {
        let count = try reader.count()
        for index in 0..<count {
            if index < wanted.count, wanted[index], index < slots.count {
                slots[index] = try slot(from: &reader)
            } else {
                try skip(&reader)
            }
        }
    }

    /// Moves past a whole row of slots.
    func skipRow(_ reader: inout ByteReader) throws {
        let count = try reader.count()
        for _ in 0..<count { try skip(&reader) }
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
        }
    }

    func reference(from reader: inout ByteReader) throws -> ObjectID {
        let index = try reader.count()
        guard index < entityNames.count else { throw ByteReader.Truncated() }
        return ObjectID(scopes[index], key: .permanent(try reader.signed()))
    }
}
