import Foundation
import ObjectStoreModel

/// The binary encoding of slots (docs/store-format.md, "Slots"): one tag byte per slot,
/// then the value. Relationship targets are written as an entity-table index and a key.
/// A sparse row (format 5) leaves out the slots that hold their blank (nil, no object, no
/// objects): a bitmap says which it holds. A typed row (format 6) is a sparse row whose
/// values have no tag: the model's type of each slot says how it is written, a string of
/// the store's dictionary is written as its number there, and a date as its distance from
/// the dictionary's date origin.
package struct RowCodec {
    /// How a typed row writes a slot's value, from the slot's property in the model.
    package enum SlotKind: Equatable, Sendable {
        /// Tagged, as in other rows (to-many relationships, and slots stores do not write).
        case tagged
        case bool, integer, double, decimal, string, date, data, uuid, uri
        /// A to-one relationship to the entity at this entity-table index (or one of its
        /// sub-entities, whose index then follows the key).
        case toOne(Int)

        /// The kind of a property's values; `entityIndex` gives a destination's table index.
        init(_ property: PropertyDescription, entityIndex: [String: Int]) {
            switch property {
            case .attribute(let attribute):
                guard attribute.isStored else { self = .tagged; return }
                switch attribute.type {
                case .boolean: self = .bool
                case .int16, .int32, .int64: self = .integer
                case .double, .float: self = .double
                case .decimal: self = .decimal
                case .string: self = .string
                case .date: self = .date
                case .binary: self = .data
                case .uuid: self = .uuid
                case .uri: self = .uri
                }
            case .relationship(let relationship):
                guard !relationship.isToMany, let destination = entityIndex[relationship.destinationEntityName] else { self = .tagged; return }
                self = .toOne(destination)
            }
        }
    }

    /// How one entity's rows are written: each slot's blank (which sparse and typed rows
    /// leave out) and kind (typed rows). Empty for an entity the model does not have: its
    /// rows are written with every slot tagged.
    package struct Shape: Sendable {
        var blanks: [SlotValue]
        /// Empty: rows are written sparse, not typed (tests, and compactions to format 5).
        var kinds: [SlotKind]

        init(blanks: [SlotValue] = [], kinds: [SlotKind] = []) {
            self.blanks = blanks
            self.kinds = kinds
        }

        var count: Int { blanks.count }
        /// Whether rows of this shape are written typed.
        var isTyped: Bool { !kinds.isEmpty && kinds.count == blanks.count }
    }

    /// Entity names in table order.
    let entityNames: [String]
    let entityIndex: [String: Int]
    let storeIdentifier: String
    /// The ID scope of each entity, so decoding a reference makes an ID without a lookup.
    let scopes: [ObjectID.Scope]
    /// Entity-table indexes by scope (scopes are shared), so writing a reference hashes a
    /// pointer, not the entity's name.
    let scopeIndex: [ObjectIdentifier: Int]
    /// Per entity-table index, each slot's blank (``SlotValue/blank(for:)``) and kind as
    /// the model says; empty for an entity the model does not have.
    let shapes: [Shape]
    /// The store's dictionary of strings (format 6): a typed row writes one of them as its
    /// number. Read from the metadata commit; a compaction chooses it.
    var strings: [String] { dictionary.strings }
    /// The UTF-8 bytes of the dictionary's strings, by number.
    var stringBytes: [[UInt8]] { dictionary.bytes }
    /// The second (since 2001-01-01) typed rows write dates from (format 6; chosen with
    /// the dictionary: the median of the rows' dates, so most take a byte less).
    var dateOrigin: Int64 { dictionary.dateOrigin }
    /// The dictionary, shared: rows read with one dictionary are read with the same one
    /// (``isSame(as:)``).
    var dictionary: Lexicon

    /// The store's dictionary: its strings (and their UTF-8 bytes), their numbers by a
    /// hash of those bytes, and the date origin. Strings are found by their bytes (Swift's
    /// `==` and hashing find a composed and a decomposed "café" equal, and hashing a
    /// String is slow).
    final class Lexicon: Sendable {
        let strings: [String]
        let bytes: [[UInt8]]
        /// By the strings' hashes (as `Int`, a key type the process uses anyway: each other
        /// one costs a scan of the binary's conformance records when first hashed).
        private let codes: [Int: Int]
        let dateOrigin: Int64
        init(_ strings: [String], dateOrigin: Int64) {
            self.strings = strings
            self.dateOrigin = dateOrigin
            bytes = strings.map { Array($0.utf8) }
            var codes: [Int: Int] = [:]
            for (i, utf8) in bytes.enumerated() {
                let hash = Int(truncatingIfNeeded: utf8.withUnsafeBytes { RowCodec.hash($0) })
                if codes[hash] == nil { codes[hash] = i }
            }
            self.codes = codes
        }

        /// The number of the string of these UTF-8 bytes, nil when it has none.
        func code(of utf8: UnsafeRawBufferPointer) -> Int? {
            guard !codes.isEmpty, utf8.count >= 2, utf8.count <= 64, let code = codes[Int(truncatingIfNeeded: RowCodec.hash(utf8))],
                  bytes[code].elementsEqual(utf8) else { return nil }
            return code
        }

        func code(of utf8: ArraySlice<UInt8>) -> Int? {
            utf8.withUnsafeBytes { code(of: $0) }
        }
        static let empty = Lexicon([], dateOrigin: 0)

        static func of(_ strings: [String], dateOrigin: Int64) -> Lexicon {
            strings.isEmpty && dateOrigin == 0 ? .empty : Lexicon(strings, dateOrigin: dateOrigin)
        }
    }
    /// The most strings a dictionary may have: it is read at every open.
    static let maxStrings = 256

    init(entityNames: [String], storeIdentifier: String, model: ManagedObjectModel? = nil, strings: [String] = [], dateOrigin: Int64 = 0) {
        self.entityNames = entityNames
        var index: [String: Int] = [:]
        for (i, name) in entityNames.enumerated() { index[name] = i }
        self.entityIndex = index
        self.storeIdentifier = storeIdentifier
        self.scopes = entityNames.map { ObjectID.Scope.of(entityName: $0, storeIdentifier: storeIdentifier) }
        var byScope: [ObjectIdentifier: Int] = [:]
        for (i, scope) in scopes.enumerated() { byScope[ObjectIdentifier(scope)] = i }
        self.scopeIndex = byScope
        self.shapes = entityNames.map { name in
            guard let entity = model?.entity(named: name) else { return Shape() }
            return Shape(blanks: entity.properties.map(SlotValue.blank(for:)), kinds: entity.properties.map { SlotKind($0, entityIndex: index) })
        }
        self.dictionary = .of(strings, dateOrigin: dateOrigin)
    }

    /// The same codec with another dictionary.
    func with(strings: [String], dateOrigin: Int64 = 0) -> RowCodec {
        var codec = self
        codec.dictionary = .of(strings, dateOrigin: dateOrigin)
        return codec
    }

    /// Whether both read rows alike: the same entity table, store and dictionary.
    package func isSame(as other: RowCodec) -> Bool {
        dictionary === other.dictionary && entityNames == other.entityNames && storeIdentifier == other.storeIdentifier
    }

    /// The shape of the rows of the entity at `index` in the entity table (empty when unknown).
    func shape(entity index: Int) -> Shape {
        index >= 0 && index < shapes.count ? shapes[index] : Shape()
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
    /// A value a typed row cannot write as its slot's kind (``encodeRow(_:shape:into:)``
    /// writes such a row sparse instead).
    struct Untypeable: Error {}

    /// The start of a row: its number of slots and, for a sparse or typed row, where its
    /// bitmap is.
    struct Head {
        var count: Int
        /// Nil: every slot follows, tagged.
        var bitmap: Int?
        /// The bitmap's first 64 bits (all set for a row that is not sparse).
        var first: UInt64 = ~0
        /// The bytes of a sparse row of more than 64 slots (for the bits past the first 64).
        var wide: [UInt8]? = nil
        /// A typed row: its values are written as their slots' kinds say, without tags.
        var typed = false

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

    /// Reads a row's count (and a sparse or typed row's bitmap), leaving the reader at its
    /// first value. A sparse row must have as many slots as the shape, and a typed row has
    /// them (its count is not written) and needs a typed shape.
    func head(_ reader: inout ByteReader, shape: Shape) throws -> Head {
        if shape.isTyped, reader.position < reader.end, reader.bytes[reader.position] == 0 {
            reader.position += 1
            return try bitmap(&reader, count: shape.count, typed: true)
        }
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
        guard count == shape.count else { throw ByteReader.Truncated() }
        return try bitmap(&reader, count: count, typed: false)
    }

    /// The bitmap of a sparse or typed row of `count` slots, at the reader.
    func bitmap(_ reader: inout ByteReader, count: Int, typed: Bool) throws -> Head {
        let bitmap = reader.position, size = (count + 7) / 8
        guard reader.end - bitmap >= size else { throw ByteReader.Truncated() }
        // No bit past the last slot.
        guard count % 8 == 0 || reader.bytes[bitmap + count / 8] >> UInt8(count % 8) == 0 else { throw ByteReader.Truncated() }
        var first: UInt64 = 0
        for k in 0..<min(size, 8) { first |= UInt64(reader.bytes[bitmap + k]) << UInt64(8 * k) }
        reader.position += size
        return Head(count: count, bitmap: bitmap, first: first, wide: count > 64 ? reader.bytes : nil, typed: typed)
    }

    /// A blank the row leaves out: the slot's own, or a sparse row of another shape is damage.
    func blank(_ index: Int, _ shape: Shape) throws -> SlotValue {
        guard index < shape.blanks.count else { throw ByteReader.Truncated() }
        return shape.blanks[index]
    }

    /// The value of slot `index`, which the row holds, at the reader.
    @inline(__always)
    func held(_ index: Int, _ head: Head, _ shape: Shape, from reader: inout ByteReader) throws -> SlotValue {
        head.typed ? try slot(kind: shape.kinds[index], from: &reader) : try slot(from: &reader)
    }

    /// Moves past the value of slot `index`, which the row holds.
    @inline(__always)
    func skipHeld(_ index: Int, _ head: Head, _ shape: Shape, _ reader: inout ByteReader) throws {
        if head.typed { try skip(kind: shape.kinds[index], &reader) } else { try skip(&reader) }
    }

    /// Every slot of the row at the reader.
    func decode(from reader: inout ByteReader, shape: Shape) throws -> [SlotValue] {
        let head = try head(&reader, shape: shape)
        var slots: [SlotValue] = []
        slots.reserveCapacity(min(head.count, 4096))
        for index in 0..<head.count {
            slots.append(head.holds(index) ? try held(index, head, shape, from: &reader) : try blank(index, shape))
        }
        return slots
    }

    /// The value of slot `index` of the row at the reader, the slots before it skipped.
    func slot(_ index: Int, from reader: inout ByteReader, shape: Shape) throws -> SlotValue {
        let head = try head(&reader, shape: shape)
        guard index < head.count else { return .value(.null) }
        guard head.holds(index) else { return try blank(index, shape) }
        if head.typed {
            for before in 0..<index where head.holds(before) { try skip(kind: shape.kinds[before], &reader) }
        } else {
            for _ in 0..<head.held(before: index) { try skip(&reader) }
        }
        return try held(index, head, shape, from: &reader)
    }

    /// Calls `body` with each slot's value in order, decoding the row once, until it returns
    /// false.
    func forEachSlot(from reader: inout ByteReader, shape: Shape, _ body: (Int, SlotValue) -> Bool) throws {
        let head = try head(&reader, shape: shape)
        for index in 0..<head.count {
            let value = head.holds(index) ? try held(index, head, shape, from: &reader) : try blank(index, shape)
            if !body(index, value) { return }
        }
    }

    /// Checks that the row at the reader decodes, without making its values (a row read in
    /// place later, slot by slot, must not fail then); returns its number of slots.
    func check(_ reader: inout ByteReader, shape: Shape) throws -> Int {
        var positions: [Int]?
        return try check(&reader, shape: shape, positions: &positions)
    }

    /// ``check(_:shape:)`` noting, when `positions` is given, where each slot the row holds
    /// starts (-1 for one it leaves out): a slot read at its position skips nothing.
    func check(_ reader: inout ByteReader, shape: Shape, positions: inout [Int]?) throws -> Int {
        let head = try head(&reader, shape: shape)
        if positions != nil { positions = [Int](repeating: -1, count: head.count) }
        for index in 0..<head.count where head.holds(index) {
            positions?[index] = reader.position
            try check(head.typed ? shape.kinds[index] : .tagged, &reader)
        }
        return head.count
    }

    /// The value of slot `index` of the row at the reader, whose value (when the row holds
    /// it) starts at `position`.
    func slot(_ index: Int, at position: Int, from reader: inout ByteReader, shape: Shape) throws -> SlotValue {
        let head = try head(&reader, shape: shape)
        guard index < head.count else { return .value(.null) }
        guard head.holds(index) else { return try blank(index, shape) }
        guard position >= reader.position, position < reader.end else { throw ByteReader.Truncated() }
        reader.position = position
        return try held(index, head, shape, from: &reader)
    }

    /// Checks one value as decoding it would, and moves past it: a tagged one, or one of a
    /// typed row written as `kind` says.
    func check(_ kind: SlotKind, _ reader: inout ByteReader) throws {
        let start = reader.position
        switch kind {
        case .tagged:
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
        case .string:
            let raw = try reader.varint()
            if raw & 1 == 0 {
                guard let length = Int(exactly: raw >> 1) else { throw ByteReader.Truncated() }
                try reader.skipString(length: length)
            } else {
                guard raw >> 1 < UInt64(strings.count) else { throw ByteReader.Truncated() }
            }
        case .integer, .double, .data, .uuid:
            try skip(kind: kind, &reader)
        default:
            // Values whose decoding checks more than their length.
            _ = try slot(kind: kind, from: &reader)
        }
    }

    /// One value of a typed row, written as `kind` says.
    func slot(kind: SlotKind, from reader: inout ByteReader) throws -> SlotValue {
        switch kind {
        case .tagged: return try slot(from: &reader)
        case .bool:
            let byte = try reader.u8()
            guard byte <= 1 else { throw ByteReader.Truncated() }
            return .value(.bool(byte == 1))
        case .integer: return .value(.integer(try reader.signed()))
        case .double: return .value(.double(Double(bitPattern: try reader.u64())))
        case .decimal:
            guard let d = DecimalText.parse(try reader.string()) else { throw ByteReader.Truncated() }
            return .value(.decimal(d))
        case .string:
            let raw = try reader.varint()
            if raw & 1 == 0 {
                guard let length = Int(exactly: raw >> 1) else { throw ByteReader.Truncated() }
                return .value(.string(try reader.string(length: length)))
            }
            guard raw >> 1 < UInt64(strings.count) else { throw ByteReader.Truncated() }
            return .value(.string(strings[Int(raw >> 1)]))
        case .date:
            let raw = try reader.varint()
            if raw != 0 {
                let zigzag = raw - 1
                let distance = Int64(bitPattern: (zigzag >> 1) ^ (0 &- (zigzag & 1)))
                return .value(.date(Date(timeIntervalSinceReferenceDate: Double(distance &+ dictionary.dateOrigin))))
            }
            let seconds = Double(bitPattern: try reader.u64())
            guard seconds.isFinite else { throw ByteReader.Truncated() }  // no date is NaN or infinite
            return .value(.date(Date(timeIntervalSinceReferenceDate: seconds)))
        case .data: return .value(.data(Data(try reader.blob())))
        case .uuid: return .value(.uuid(try uuid(from: &reader)))
        case .uri:
            guard let url = URL(string: try reader.string()) else { throw ByteReader.Truncated() }
            return .value(.uri(url))
        case .toOne(let destination):
            let raw = try reader.varint()
            let entity = raw & 1 == 0 ? destination : try reader.count()
            guard entity < entityNames.count else { throw ByteReader.Truncated() }
            return .toOne(ObjectID(scopes[entity], key: .permanent(Int64(raw >> 1))))
        }
    }

    /// Moves past one value of a typed row.
    func skip(kind: SlotKind, _ reader: inout ByteReader) throws {
        switch kind {
        case .tagged: try skip(&reader)
        case .bool: _ = try reader.u8()
        case .integer: _ = try reader.varint()
        case .double: _ = try reader.u64()
        case .decimal, .data, .uri: _ = try reader.blob()
        case .string:
            let raw = try reader.varint()
            if raw & 1 == 0 {
                guard let length = Int(exactly: raw >> 1), length <= reader.end - reader.position else { throw ByteReader.Truncated() }
                reader.position += length
            }
        case .date:
            if try reader.varint() == 0 { _ = try reader.u64() }
        case .uuid: for _ in 0..<16 { _ = try reader.u8() }
        case .toOne(_):
            if try reader.varint() & 1 == 1 { _ = try reader.varint() }
        }
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
        case .uuid: return .value(.uuid(try uuid(from: &reader)))
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
    func decode(slots wanted: [Int], from reader: inout ByteReader, shape: Shape) throws -> [SlotValue] {
        let head = try head(&reader, shape: shape)
        var result: [SlotValue] = []
        result.reserveCapacity(wanted.count)
        var next = 0
        for index in 0..<head.count {
            guard next < wanted.count else { break }
            let isHeld = head.holds(index)
            if index == wanted[next] {
                result.append(isHeld ? try held(index, head, shape, from: &reader) : try blank(index, shape))
                next += 1
            } else if isHeld {
                try skipHeld(index, head, shape, &reader)
            }
        }
        while result.count < wanted.count { result.append(.value(.null)) }
        return result
    }

    /// Decodes the slots `wanted` marks into `slots` (which has one entry per slot),
    /// skipping the others; a row with fewer slots leaves the rest as they are. Reading
    /// stops before slot `end` (the reader is then inside the row).
    /// Returns the row's number of slots.
    /// `present`, when given, marks wanted slots whose caller asks only whether they hold a
    /// value (a count): a string, data, decimal or URI a typed row holds (a typed slot's value
    /// is never null) is skipped and read as ``presentMarker``, so no `String` or `Data` is
    /// made for it; any other value is decoded.
    @discardableResult
    func decode(into slots: inout [SlotValue], wanted: [Bool], present: [Bool]? = nil, from reader: inout ByteReader, shape: Shape, end: Int = .max) throws -> Int {
        let head = try head(&reader, shape: shape)
        for index in 0..<min(head.count, end) {
            let isHeld = head.holds(index)
            if index < wanted.count, wanted[index], index < slots.count {
                if isHeld, head.typed, let present, index < present.count, present[index], index < shape.kinds.count {
                    switch shape.kinds[index] {
                    case .string, .data, .decimal, .uri:
                        try skip(kind: shape.kinds[index], &reader)
                        slots[index] = Self.presentMarker
                        continue
                    default: break
                    }
                }
                slots[index] = isHeld ? try held(index, head, shape, from: &reader) : try blank(index, shape)
            } else if isHeld {
                try skipHeld(index, head, shape, &reader)
            }
        }
        return head.count
    }

    /// What a slot decoded for its presence only holds when it holds a value.
    package static let presentMarker = SlotValue.value(.bool(true))

    /// Moves past one slot.
    func skip(_ reader: inout ByteReader) throws {
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
