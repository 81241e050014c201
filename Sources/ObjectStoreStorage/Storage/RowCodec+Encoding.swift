import Foundation
import ObjectStoreModel

// Writing rows: sparse and typed encodings of a row's slots, and recoding a row for a
// compaction's new dictionary.
extension RowCodec {
    /// Every slot, tagged (as rows before format 5, and as uniqueness values are hashed).
    package func encode(_ slots: [SlotValue], into writer: inout ByteWriter) throws {
        writer.varint(UInt64(slots.count))
        for slot in slots { try encode(slot, into: &writer) }
    }

    /// A row: typed when the shape has a kind for each slot and every value the row holds
    /// is of its slot's kind (format 6), sparse when it has a blank for each slot (format
    /// 5), else every slot tagged.
    package func encodeRow(_ slots: [SlotValue], shape: Shape, into writer: inout ByteWriter) throws {
        guard !shape.blanks.isEmpty, shape.count == slots.count else {
            // A row of no slots would start with the typed row's mark.
            if slots.isEmpty, shape.isTyped { throw Untypeable() }
            return try encode(slots, into: &writer)
        }
        let blanks = shape.blanks
        if shape.isTyped {
            // The typed row's mark: a zero count, which no other row of an entity with
            // slots starts with (its count is its number of slots). A value of another
            // type than its slot's takes the row back, to be written sparse.
            let begin = writer.bytes.count
            writer.u8(0)
            let bitmap = writer.bytes.count
            writer.bytes.append(contentsOf: repeatElement(0, count: (slots.count + 7) / 8))
            var typed = true
            for (index, slot) in slots.enumerated() where slot != blanks[index] {
                guard isTypeable(slot, shape.kinds[index]) else {
                    typed = false
                    break
                }
                writer.bytes[bitmap + index >> 3] |= 1 << UInt8(index & 7)
                try encode(slot, kind: shape.kinds[index], into: &writer)
            }
            if typed { return }
            writer.bytes.removeSubrange(begin...)
        }
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
    package static func writeSparseCount(_ count: Int, into writer: inout ByteWriter) {
        writer.varint(UInt64(count))
        writer.bytes[writer.bytes.count - 1] |= 0x80
        writer.u8(0)
    }

    /// Whether a typed row can write `slot` as `kind` says (a value of the slot's type).
    package func isTypeable(_ slot: SlotValue, _ kind: SlotKind) -> Bool {
        switch (kind, slot) {
        case (.tagged, _): return true
        case (.bool, .value(.bool)), (.integer, .value(.integer)), (.double, .value(.double)), (.decimal, .value(.decimal)),
             (.string, .value(.string)), (.date, .value(.date)), (.data, .value(.data)), (.uuid, .value(.uuid)), (.uri, .value(.uri)):
            return true
        case (.toOne, .toOne(let id?)):
            guard let key = id.primaryKey, entityIndex(of: id) != nil else { return false }
            return key >= 0 && key <= StoreMetadata.maxKey
        default: return false
        }
    }

    /// One slot of a typed row, as its kind writes it (``isTypeable(_:_:)`` said it can).
    package func encode(_ slot: SlotValue, kind: SlotKind, into writer: inout ByteWriter) throws {
        switch (kind, slot) {
        case (.tagged, _): try encode(slot, into: &writer, ascendingLists: true)
        case (_, .value(.bool(let b))): writer.u8(b ? 1 : 0)
        case (_, .value(.integer(let i))): writer.signed(i)
        case (_, .value(.double(let d))): writer.u64(d.bitPattern)
        case (_, .value(.decimal(let d))): writer.string(d.description)
        case (_, .value(.string(let text))):
            // A string of the dictionary as its number (odd), another as its length (even)
            // and bytes. The dictionary's string must be the same bytes, not only equal
            // (Swift's == finds canonically equivalent strings equal).
            var text = text
            text.withUTF8 { utf8 in
                if let code = dictionary.code(of: UnsafeRawBufferPointer(utf8)) {
                    writer.varint(UInt64(code) << 1 | 1)
                } else {
                    writer.varint(UInt64(utf8.count) << 1)
                    writer.bytes.append(contentsOf: utf8)
                }
            }
        case (_, .value(.date(let d))):
            // A whole second (every date of the years 0001-9999 is) as one more than the
            // zigzag of its distance from the date origin; another as 0 and the Double's bits.
            let seconds = d.timeIntervalSinceReferenceDate
            if let whole = seconds.exactWholeNumber, whole.magnitude < 1 << 48 {
                let distance = whole - dictionary.dateOrigin
                writer.varint(UInt64(bitPattern: (distance << 1) ^ (distance >> 63)) + 1)
            } else {
                writer.u8(0)
                writer.u64(seconds.bitPattern)
            }
        case (_, .value(.data(let d))): writer.blob(Array(d))
        case (_, .value(.uuid(let u))): withUnsafeBytes(of: u.uuid) { writer.bytes.append(contentsOf: $0) }
        case (_, .value(.uri(let u))): writer.string(u.absoluteString)
        case (.toOne(let destination), .toOne(let id?)):
            // The key shifted left once; set when the object is of another entity than the
            // destination (a sub-entity), whose index follows.
            guard let entity = entityIndex(of: id), let key = id.primaryKey else { throw UnknownEntity(name: id.entityName) }
            writer.varint(UInt64(key) << 1 | (entity == destination ? 0 : 1))
            if entity != destination { writer.varint(UInt64(entity)) }
        default:
            throw Untypeable()
        }
    }

    /// One slot, tagged; with `ascendingLists`, a to-many list of one entity's objects in
    /// ascending key order as its key distances (rows of format 5; values hashed for
    /// uniqueness keep the tags they always had).
    package func encode(_ slot: SlotValue, into writer: inout ByteWriter, ascendingLists: Bool = false) throws {
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
    package func ascending(_ ids: [ObjectID], into writer: inout ByteWriter) throws -> Bool {
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

    package func reference(_ id: ObjectID, into writer: inout ByteWriter) throws {
        guard let entity = entityIndex(of: id), let key = id.primaryKey else { throw UnknownEntity(name: id.entityName) }
        writer.varint(UInt64(entity))
        writer.signed(key)
    }

    package func encode(_ value: Value, into writer: inout ByteWriter) {
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


    /// Walks the values of the typed row at `start` without making them: `string` gets the
    /// bytes of each string (a dictionary string's from the dictionary, or only its number,
    /// to `code`, when that is given), `date` each date at a whole second. False, with
    /// nothing called, when the row is not typed.
    package func forEachTypedValue(_ bytes: [UInt8], from start: Int, shape: Shape, string: (ArraySlice<UInt8>) -> Void, code: ((Int) -> Void)? = nil,
                           date: (Int64) -> Void) throws -> Bool {
        guard shape.isTyped, start < bytes.count, bytes[start] == 0 else { return false }
        var reader = ByteReader(bytes, from: start)
        let head = try head(&reader, shape: shape)
        for index in 0..<head.count where head.holds(index) {
            switch shape.kinds[index] {
            case .string:
                let raw = try reader.varint()
                if raw & 1 == 0 {
                    guard let length = Int(exactly: raw >> 1) else { throw ByteReader.Truncated() }
                    let from = reader.position
                    try reader.skipString(length: length)
                    string(bytes[from..<reader.position])
                } else {
                    guard raw >> 1 < UInt64(dictionary.bytes.count) else { throw ByteReader.Truncated() }
                    if let code { code(Int(raw >> 1)) } else { string(dictionary.bytes[Int(raw >> 1)][...]) }
                }
            case .date:
                let raw = try reader.varint()
                if raw == 0 {
                    _ = try reader.u64()
                } else {
                    let zigzag = raw - 1
                    date(Int64(bitPattern: (zigzag >> 1) ^ (0 &- (zigzag & 1))) &+ dictionary.dateOrigin)
                }
            case let kind: try skip(kind: kind, &reader)
            }
        }
        return true
    }

    /// The typed row at `start` written again with `target`'s dictionary (its strings'
    /// numbers and date origin), its other values copied as they are, without making
    /// values; false, with nothing written, when the row is not typed. Returns after
    /// checking each string and date it writes.
    package func recode(_ bytes: [UInt8], from start: Int, shape: Shape, to target: RowCodec, into writer: inout ByteWriter) throws -> Bool {
        var none: [SlotValue] = []
        return try recode(bytes, from: start, shape: shape, to: target, codes: codes(in: target), into: &writer, wanted: [], decoded: &none)
    }

    /// Per string of this codec's dictionary, its number in `target`'s (-1: none), so a
    /// row written again with `target` maps a string's number without hashing the string.
    package func codes(in target: RowCodec) -> [Int] {
        stringBytes.map { target.dictionary.code(of: $0[...]) ?? -1 }
    }

    /// ``recode(_:from:shape:to:into:)`` with the dictionary's numbers mapped by `codes`
    /// (``codes(in:)``), also decoding the slots `wanted` names into `decoded` (a blank for
    /// one the row leaves out), as ``decode(into:wanted:present:from:shape:end:)`` would: a
    /// compaction reads each row once for writing it and for its columns and indexes. The
    /// row's bytes are copied through a pointer (a slice of them per value retained and
    /// released the row's buffer, which the cores of a compaction share).
    package func recode(_ bytes: [UInt8], from start: Int, shape: Shape, to target: RowCodec, codes: [Int], into writer: inout ByteWriter,
                        wanted: [Bool], decoded: inout [SlotValue]) throws -> Bool {
        guard shape.isTyped, start < bytes.count, bytes[start] == 0 else { return false }
        var reader = ByteReader(bytes, from: start)
        let head = try head(&reader, shape: shape)
        let lexicon = target.dictionary
        let capturing = min(wanted.count, decoded.count, head.count)
        return try bytes.withUnsafeBufferPointer { source in
            func copy(_ range: Range<Int>) { writer.bytes.append(contentsOf: UnsafeBufferPointer(rebasing: source[range])) }
            copy(start..<reader.position)
            for index in 0..<head.count {
                guard head.holds(index) else {
                    if index < capturing, wanted[index] { decoded[index] = shape.blanks[index] }
                    continue
                }
                let from = reader.position
                if index < capturing, wanted[index] {
                    // Decoded, then read again below to be written.
                    decoded[index] = try slot(kind: shape.kinds[index], from: &reader)
                    reader.position = from
                }
                switch shape.kinds[index] {
                case .string:
                    let raw = try reader.varint()
                    if raw & 1 == 0 {
                        guard let length = Int(exactly: raw >> 1) else { throw ByteReader.Truncated() }
                        let at = reader.position
                        try reader.skipString(length: length)
                        if let code = lexicon.code(of: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: source[at..<reader.position]))) {
                            writer.varint(UInt64(code) << 1 | 1)
                        } else {
                            writer.varint(UInt64(length) << 1)
                            copy(at..<reader.position)
                        }
                    } else {
                        let number = Int(truncatingIfNeeded: raw >> 1)
                        guard raw >> 1 < UInt64(min(codes.count, dictionary.bytes.count)) else { throw ByteReader.Truncated() }
                        if codes[number] >= 0 {
                            writer.varint(UInt64(codes[number]) << 1 | 1)
                        } else {
                            let text = dictionary.bytes[number]
                            writer.varint(UInt64(text.count) << 1)
                            writer.bytes.append(contentsOf: text)
                        }
                    }
                case .date:
                    let raw = try reader.varint()
                    if raw == 0 {
                        _ = try reader.u64()
                        copy(from..<reader.position)
                    } else {
                        let zigzag = raw - 1
                        let whole = Int64(bitPattern: (zigzag >> 1) ^ (0 &- (zigzag & 1))) &+ dictionary.dateOrigin
                        guard whole.magnitude < 1 << 48 else { throw ByteReader.Truncated() }
                        let distance = whole - lexicon.dateOrigin
                        writer.varint(UInt64(bitPattern: (distance << 1) ^ (distance >> 63)) + 1)
                    }
                case let kind:
                    try check(kind, &reader)
                    copy(from..<reader.position)
                }
            }
            return true
        }
    }

    /// FNV-1a of some bytes (the dictionary's strings are found by it).
    package static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }

    /// 16 bytes as a UUID, read in place (an array per UUID was most of decoding one).
    package func uuid(from reader: inout ByteReader) throws -> UUID {
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        try withUnsafeMutableBytes(of: &raw) { target in
            for k in 0..<16 { target[k] = try reader.u8() }
        }
        return UUID(uuid: raw)
    }
}
