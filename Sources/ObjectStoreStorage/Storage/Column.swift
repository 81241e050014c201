import Foundation
import ObjectStoreModel

/// One fixed-width attribute of every snapshot row of an entity, in directory order: a
/// bitmap of nils, then a value per row that has one, each ``width`` bytes wide
/// (docs/store-format.md, "Columns"); in memory every row has an 8-byte slot (zero for
/// nil). A query
/// comparing the attribute with a constant reads the column instead of decoding the rows.
package struct Column: Sendable {
    package enum Kind: UInt32, Sendable {
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
        package func less(_ a: UInt64, _ b: UInt64) -> Bool {
            switch self {
            case .integer, .boolean: return Int64(bitPattern: a) < Int64(bitPattern: b)
            case .double, .date: return Double(bitPattern: a) < Double(bitPattern: b)
            }
        }

        /// The column kind of an attribute type, nil for types without a fixed width.
        package init?(_ type: AttributeType) {
            switch type {
            case .int16, .int32, .int64: self = .integer
            case .double, .float: self = .double
            case .date: self = .date
            case .boolean: self = .boolean
            default: return nil
            }
        }
    }

    package let kind: Kind
    package let rows: Int
    /// Bit i (of byte i / 8) set: row i's value is nil.
    package let nulls: [UInt8]
    package let values: [UInt64]
    /// How many bytes each value takes in the file: 8 (the value as ``bits(_:kind:)``
    /// gives it), or 4, 2 or 1 when every value is a whole number that fits (a signed
    /// integer of that width; for doubles and dates, the number the Double holds exactly).
    package private(set) var width: Int

    /// The same column with 8-byte values (as format 3 wrote every column).
    package var widened: Column {
        var column = self
        column.width = 8
        return column
    }

    /// The bytes of a column of `rows` rows, `present` of them with a value of `width` bytes.
    package static func byteCount(rows: Int, present: Int, width: Int = 8) -> Int { (rows + 7) / 8 + present * width }

    /// Whether a file may give a column's values this width: 1, 2, 4 or 8 bytes. (A
    /// function, not a `Set` literal: the first set of `Int` a process makes costs a scan of
    /// the binary's conformance records, on every open.)
    package static func isWidth(_ width: Int) -> Bool { width == 1 || width == 2 || width == 4 || width == 8 }

    /// How many rows have a value.
    package var present: Int { nulls.reduce(rows) { $0 - $1.nonzeroBitCount } }

    /// A column as read from the file (`bytes` holds ``byteCount(rows:present:width:)``
    /// bytes), or nil when its bitmap does not leave `present` rows with a value.
    package init?(kind: Kind, rows: Int, present: Int, width: Int = 8, bytes: [UInt8]) {
        guard Column.isWidth(width), bytes.count >= (rows + 7) / 8 else { return nil }
        self.kind = kind
        self.rows = rows
        self.width = width
        let bitmap = (rows + 7) / 8
        nulls = Array(bytes[0..<bitmap])
        var values = [UInt64](repeating: 0, count: rows)
        var next = bitmap
        for i in 0..<rows where nulls[i >> 3] & (1 << UInt8(i & 7)) == 0 {
            guard next + width <= bytes.count else { return nil }
            values[i] = bytes.withUnsafeBytes { raw in
                switch width {
                case 8: return UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: next, as: UInt64.self))
                case 4: return Column.widened(Int64(Int32(littleEndian: raw.loadUnaligned(fromByteOffset: next, as: Int32.self))), kind: kind)
                case 2: return Column.widened(Int64(Int16(littleEndian: raw.loadUnaligned(fromByteOffset: next, as: Int16.self))), kind: kind)
                default: return Column.widened(Int64(Int8(bitPattern: raw[next])), kind: kind)
                }
            }
            next += width
        }
        // Bits past the last row are zero, and every value is used.
        guard next == bytes.count, rows % 8 == 0 || nulls[bitmap - 1] >> UInt8(rows % 8) == 0 else { return nil }
        guard present == rows - nulls.reduce(0, { $0 + $1.nonzeroBitCount }) else { return nil }
        self.values = values
    }

    /// A column of values, or nil when one does not fit the kind (another type, or a NaN,
    /// which compares unlike a number): such an attribute gets no column.
    package init?(kind: Kind, values slotValues: [SlotValue]) {
        var builder = Builder(kind: kind, capacity: slotValues.count)
        for slot in slotValues { builder.append(slot) }
        guard let column = builder.column else { return nil }
        self = column
    }

    /// A column made a row's value at a time (a compaction's, as it reads each row once).
    package struct Builder {
        package let kind: Kind
        private var nulls: [UInt8] = []
        private var values: [UInt64] = []
        /// False once a value did not fit the kind: then there is no column.
        private var fits = true

        package init(kind: Kind, capacity: Int = 0) {
            self.kind = kind
            nulls.reserveCapacity((capacity + 7) / 8)
            values.reserveCapacity(capacity)
        }

        /// The next row's value.
        package mutating func append(_ slot: SlotValue) {
            let i = values.count
            if i & 7 == 0 { nulls.append(0) }
            values.append(0)
            guard fits, case .value(let value) = slot else {
                fits = false
                return
            }
            if value.isNull {
                nulls[i >> 3] |= 1 << UInt8(i & 7)
            } else if let bits = Column.bits(value, kind: kind), kind != .double || !Double(bitPattern: bits).isNaN {
                values[i] = bits
            } else {
                fits = false
            }
        }

        /// Whether no row was appended yet.
        package var isEmpty: Bool { values.isEmpty }

        /// Appends the rows `other` was given, in order (a part of the rows built apart).
        package mutating func append(contentsOf other: Builder) {
            for (j, bits) in other.values.enumerated() {
                let i = values.count
                if i & 7 == 0 { nulls.append(0) }
                values.append(bits)
                if other.nulls[j >> 3] & (1 << UInt8(j & 7)) != 0 { nulls[i >> 3] |= 1 << UInt8(i & 7) }
            }
            fits = fits && other.fits
        }

        /// The column of the values appended, nil when one did not fit.
        package var column: Column? {
            guard fits else { return nil }
            let width = Column.narrowest(values.indices.lazy.filter { nulls[$0 >> 3] & (1 << UInt8($0 & 7)) == 0 }.map { values[$0] }, kind: kind)
            return Column(kind: kind, nulls: nulls, values: values, width: width)
        }
    }

    private init(kind: Kind, nulls: [UInt8], values: [UInt64], width: Int) {
        self.kind = kind
        self.rows = values.count
        self.nulls = nulls
        self.values = values
        self.width = width
    }

    /// A narrow value as the column holds it in memory: an integer as it is, a whole
    /// number of a double or date as that Double's bits.
    private static func widened(_ number: Int64, kind: Kind) -> UInt64 {
        switch kind {
        case .integer, .boolean: return UInt64(bitPattern: number)
        case .double, .date: return Double(number).bitPattern
        }
    }

    /// The whole number a value stands for when it has a narrow form that reads back to
    /// the same bits (not -0.0, not 2.5), else nil.
    package static func narrowNumber(_ bits: UInt64, kind: Kind) -> Int64? {
        switch kind {
        case .integer, .boolean: return Int64(bitPattern: bits)
        case .double, .date:
            return Double(bitPattern: bits).exactWholeNumber
        }
    }

    /// The fewest bytes (1, 2, 4 or 8) that hold each of the values.
    package static func narrowest(_ values: some Sequence<UInt64>, kind: Kind) -> Int {
        var width = 1
        for bits in values {
            guard let number = narrowNumber(bits, kind: kind) else { return 8 }
            if Int64(Int8.min)...Int64(Int8.max) ~= number { continue }
            if Int64(Int16.min)...Int64(Int16.max) ~= number { width = max(width, 2); continue }
            if Int64(Int32.min)...Int64(Int32.max) ~= number { width = max(width, 4); continue }
            return 8
        }
        return width
    }

    /// A value as a column of `kind` stores it, nil for a value of another type (or a NaN
    /// date, which compares unlike any date). Queries use it for their constants too.
    package static func bits(_ value: Value, kind: Kind) -> UInt64? {
        switch (kind, value) {
        case (.integer, .integer(let x)): return UInt64(bitPattern: x)
        case (.double, .double(let x)): return x.bitPattern
        case (.date, .date(let d)) where !d.timeIntervalSinceReferenceDate.isNaN: return d.timeIntervalSinceReferenceDate.bitPattern
        case (.boolean, .bool(let b)): return b ? 1 : 0
        default: return nil
        }
    }

    package func isNull(_ i: Int) -> Bool { nulls[i >> 3] & (1 << UInt8(i & 7)) != 0 }

    /// Row i's value.
    package func value(at i: Int) -> Value {
        if isNull(i) { return .null }
        switch kind {
        case .integer: return .integer(Int64(bitPattern: values[i]))
        case .double: return .double(Double(bitPattern: values[i]))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: values[i])))
        case .boolean: return .bool(values[i] != 0)
        }
    }

    /// The encoded column, each value ``width`` bytes.
    package var bytes: [UInt8] {
        var writer = ByteWriter()
        writer.bytes = nulls
        writer.bytes.reserveCapacity(Column.byteCount(rows: rows, present: present, width: width))
        for (i, value) in values.enumerated() where !isNull(i) {
            guard width < 8, let number = Column.narrowNumber(value, kind: kind) else {
                writer.u64(value)
                continue
            }
            for byte in 0..<width { writer.u8(UInt8(truncatingIfNeeded: number >> (8 * byte))) }
        }
        return writer.bytes
    }
}
