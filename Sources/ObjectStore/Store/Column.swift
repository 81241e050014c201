import Foundation
import ObjectStoreModel

/// One fixed-width attribute of every snapshot row of an entity, in directory order: a
/// bitmap of nils, then an 8-byte value per row that has one (docs/store-format.md,
/// "Columns"); in memory every row has a slot (zero for nil). A query
/// comparing the attribute with a constant reads the column instead of decoding the rows.
struct Column: Sendable {
    enum Kind: UInt32, Sendable {
        /// Int64 (int16, int32, int64 attributes).
        case integer = 1
        /// The bits of a Double (double, float).
        case double = 2
        /// A date's seconds since 2001-01-01, as Double bits.
        case date = 3
        /// 0 or 1.
        case boolean = 4

        /// Whether `a` comes before `b` as this kind orders its stored values: integers and
        /// booleans as Int64, doubles and dates as Double (-0.0 equal to 0.0).
        func less(_ a: UInt64, _ b: UInt64) -> Bool {
            switch self {
            case .integer, .boolean: return Int64(bitPattern: a) < Int64(bitPattern: b)
            case .double, .date: return Double(bitPattern: a) < Double(bitPattern: b)
            }
        }

        /// The column kind of an attribute type, nil for types without a fixed width.
        init?(_ type: AttributeType) {
            switch type {
            case .int16, .int32, .int64: self = .integer
            case .double, .float: self = .double
            case .date: self = .date
            case .boolean: self = .boolean
            default: return nil
            }
        }
    }

    let kind: Kind
    let rows: Int
    /// Bit i (of byte i / 8) set: row i's value is nil.
    let nulls: [UInt8]
    let values: [UInt64]

    /// The bytes of a column of `rows` rows, `present` of them with a value.
    static func byteCount(rows: Int, present: Int) -> Int { (rows + 7) / 8 + present * 8 }

    /// How many rows have a value.
    var present: Int { nulls.reduce(rows) { $0 - $1.nonzeroBitCount } }

    /// A column as read from the file (`bytes` holds ``byteCount(rows:present:)`` bytes), or
    /// nil when its bitmap does not leave `present` rows with a value.
    init?(kind: Kind, rows: Int, present: Int, bytes: [UInt8]) {
        self.kind = kind
        self.rows = rows
        let bitmap = (rows + 7) / 8
        nulls = Array(bytes[0..<bitmap])
        var values = [UInt64](repeating: 0, count: rows)
        var next = bitmap
        for i in 0..<rows where nulls[i >> 3] & (1 << UInt8(i & 7)) == 0 {
            guard next + 8 <= bytes.count else { return nil }
            values[i] = bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: next, as: UInt64.self)) }
            next += 8
        }
        // Bits past the last row are zero, and every value is used.
        guard next == bytes.count, rows % 8 == 0 || nulls[bitmap - 1] >> UInt8(rows % 8) == 0 else { return nil }
        guard present == rows - nulls.reduce(0, { $0 + $1.nonzeroBitCount }) else { return nil }
        self.values = values
    }

    /// A column of values, or nil when one does not fit the kind (another type, or a NaN,
    /// which compares unlike a number): such an attribute gets no column.
    init?(kind: Kind, values slotValues: [SlotValue]) {
        self.kind = kind
        rows = slotValues.count
        var nulls = [UInt8](repeating: 0, count: (slotValues.count + 7) / 8)
        var values = [UInt64](repeating: 0, count: slotValues.count)
        for (i, slot) in slotValues.enumerated() {
            guard case .value(let value) = slot else { return nil }
            if value.isNull {
                nulls[i >> 3] |= 1 << UInt8(i & 7)
                continue
            }
            guard let bits = Column.bits(value, kind: kind), kind != .double || !Double(bitPattern: bits).isNaN else { return nil }
            values[i] = bits
        }
        self.nulls = nulls
        self.values = values
    }

    /// A value as a column of `kind` stores it, nil for a value of another type (or a NaN
    /// date, which compares unlike any date). Queries use it for their constants too.
    static func bits(_ value: Value, kind: Kind) -> UInt64? {
        switch (kind, value) {
        case (.integer, .integer(let x)): return UInt64(bitPattern: x)
        case (.double, .double(let x)): return x.bitPattern
        case (.date, .date(let d)) where !d.timeIntervalSinceReferenceDate.isNaN: return d.timeIntervalSinceReferenceDate.bitPattern
        case (.boolean, .bool(let b)): return b ? 1 : 0
        default: return nil
        }
    }

    func isNull(_ i: Int) -> Bool { nulls[i >> 3] & (1 << UInt8(i & 7)) != 0 }

    /// Row i's value.
    func value(at i: Int) -> Value {
        if isNull(i) { return .null }
        switch kind {
        case .integer: return .integer(Int64(bitPattern: values[i]))
        case .double: return .double(Double(bitPattern: values[i]))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: values[i])))
        case .boolean: return .bool(values[i] != 0)
        }
    }

    /// The encoded column.
    var bytes: [UInt8] {
        var writer = ByteWriter()
        writer.bytes = nulls
        writer.bytes.reserveCapacity(Column.byteCount(rows: rows, present: present))
        for (i, value) in values.enumerated() where !isNull(i) { writer.u64(value) }
        return writer.bytes
    }
}
