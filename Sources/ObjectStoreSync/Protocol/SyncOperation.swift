import Foundation
import ObjectStoreModel

/// A moment as TaskChampion's operations carry it: RFC 3339 in UTC with up to nine
/// fractional digits, kept to the nanosecond (a `Date` would round it), so "the later
/// update wins" compares what the other replica compares.
public struct SyncTimestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Seconds since 1970.
    public var seconds: Int64
    /// Nanoseconds within the second (0 to 999,999,999).
    public var nanoseconds: Int32

    /// The moment `seconds` since 1970 and `nanoseconds` into that second.
    public init(seconds: Int64, nanoseconds: Int32 = 0) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    /// The moment of a `Date`, to the microsecond a `Date` keeps reliably.
    public init(_ date: Date) {
        let micros = (date.timeIntervalSince1970 * 1_000_000).rounded()
        let whole = (micros / 1_000_000).rounded(.down)
        seconds = Int64(whole)
        nanoseconds = Int32((micros - whole * 1_000_000) * 1000)
    }

    /// The moment as a `Date` (to the precision a `Date` keeps, about a tenth of a microsecond).
    public var date: Date { Date(timeIntervalSince1970: TimeInterval(seconds) + TimeInterval(nanoseconds) / 1_000_000_000) }

    /// Whether `lhs` is before `rhs`.
    public static func < (lhs: SyncTimestamp, rhs: SyncTimestamp) -> Bool {
        (lhs.seconds, lhs.nanoseconds) < (rhs.seconds, rhs.nanoseconds)
    }

    /// RFC 3339 in UTC, fractional digits as few as show the value in groups of three (as
    /// the Rust replica writes it).
    public var description: String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = ISO8601.civilDate(daysSinceEpoch: Int(days))
        // Digits written by hand: String(format:) was most of the time of sending 10,000 tasks.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(30)
        func digits(_ value: Int, _ count: Int) {
            var divisor = 1
            for _ in 1..<count { divisor *= 10 }
            var rest = value
            if rest >= divisor * 10 {
                // A year past 9999: every digit.
                bytes.append(contentsOf: Array(String(rest).utf8))
                return
            }
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
                rest %= divisor
                divisor /= 10
            }
        }
        if year < 0 { bytes.append(UInt8(ascii: "-")) }
        digits(abs(year), 4)
        bytes.append(UInt8(ascii: "-"))
        digits(month, 2)
        bytes.append(UInt8(ascii: "-"))
        digits(day, 2)
        bytes.append(UInt8(ascii: "T"))
        digits(Int(secondOfDay / 3600), 2)
        bytes.append(UInt8(ascii: ":"))
        digits(Int(secondOfDay / 60 % 60), 2)
        bytes.append(UInt8(ascii: ":"))
        digits(Int(secondOfDay % 60), 2)
        if nanoseconds != 0 {
            bytes.append(UInt8(ascii: "."))
            if nanoseconds % 1_000_000 == 0 {
                digits(Int(nanoseconds / 1_000_000), 3)
            } else if nanoseconds % 1000 == 0 {
                digits(Int(nanoseconds / 1000), 6)
            } else {
                digits(Int(nanoseconds), 9)
            }
        }
        bytes.append(UInt8(ascii: "Z"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Parses RFC 3339 (`Z` or a numeric offset, any number of fractional digits, the
    /// first nine kept); nil for anything else.
    package init?(rfc3339 text: String) {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int64? {
            guard range.upperBound <= bytes.count else { return nil }
            var value: Int64 = 0
            for i in range {
                guard (48...57).contains(bytes[i]) else { return nil }
                value = value * 10 + Int64(bytes[i] - 48)
            }
            return value
        }
        guard bytes.count >= 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t"),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var index = 19
        var nanos: Int64 = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            var digits = 0
            while index < bytes.count, (48...57).contains(bytes[index]) {
                if digits < 9 { nanos = nanos * 10 + Int64(bytes[index] - 48) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 9) { nanos *= 10 }
        }
        guard index < bytes.count else { return nil }
        var offset: Int64 = 0
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            index += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard let hours = number(index + 1..<index + 3), index + 3 < bytes.count, bytes[index + 3] == UInt8(ascii: ":"),
                  let minutes = number(index + 4..<index + 6) else { return nil }
            offset = (hours * 3600 + minutes * 60) * (bytes[index] == UInt8(ascii: "-") ? -1 : 1)
            index += 6
        default:
            return nil
        }
        guard index == bytes.count else { return nil }
        let days = Int64(ISO8601.daysSinceEpoch(year: Int(year), month: Int(month), day: Int(day)))
        seconds = days * 86_400 + hour * 3600 + minute * 60 + min(second, 59) - offset
        nanoseconds = Int32(nanos)
    }
}

/// One change of TaskChampion's task database, as versions carry it: a task is a map
/// from string to string, created, deleted, or one property set (nil: removed).
public enum SyncOperation: Sendable, Hashable {
    /// The task is created (with no properties).
    case create(UUID)
    /// The task is deleted.
    case delete(UUID)
    /// One property of the task is set to `value` (nil: removed) at `timestamp`.
    case update(UUID, property: String, value: String?, timestamp: SyncTimestamp)

    /// The task it changes.
    public var task: UUID {
        switch self {
        case .create(let uuid), .delete(let uuid), .update(let uuid, _, _, _): return uuid
        }
    }

    /// TaskChampion's transform of two concurrent operations: `(first', second')` such that
    /// applying `second'` after `first` gives what applying `first'` after `second` gives
    /// (nil: nothing to apply). Creations or deletions of one task twice: nothing; a create
    /// and a delete: the create stays; an update and a create: the update stays; an update
    /// and a delete: the delete stays; two updates of one property: equal values need
    /// nothing, else the later timestamp wins (the first on a tie); all else both stay.
    package static func transform(_ first: SyncOperation, _ second: SyncOperation) -> (SyncOperation?, SyncOperation?) {
        guard first.task == second.task else { return (first, second) }
        switch (first, second) {
        case (.create, .create), (.delete, .delete): return (nil, nil)
        case (.create, .delete): return (first, nil)
        case (.delete, .create): return (nil, second)
        case (.update, .create): return (first, nil)
        case (.create, .update): return (nil, second)
        case (.update, .delete): return (nil, second)
        case (.delete, .update): return (first, nil)
        case (.update(_, let property1, let value1, let time1), .update(_, let property2, let value2, let time2)) where property1 == property2:
            if value1 == value2 { return (nil, nil) }
            return time1 < time2 ? (nil, second) : (first, nil)
        default: return (first, second)
        }
    }

    /// About how many bytes ``json`` has (for sizing versions without writing them twice).
    package var estimatedSize: Int {
        switch self {
        case .create, .delete: return 60
        case .update(_, let property, let value, _): return 130 + property.utf8.count + (value?.utf8.count ?? 4)
        }
    }

    /// The operation as the Rust replica's JSON writes it.
    package var json: String {
        switch self {
        case .create(let uuid): return "{\"Create\":{\"uuid\":\"\(uuid.uuidString.lowercased())\"}}"
        case .delete(let uuid): return "{\"Delete\":{\"uuid\":\"\(uuid.uuidString.lowercased())\"}}"
        case .update(let uuid, let property, let value, let timestamp):
            return "{\"Update\":{\"uuid\":\"\(uuid.uuidString.lowercased())\",\"property\":\(JSONText.quote(property)),\"value\":\(value.map(JSONText.quote) ?? "null"),\"timestamp\":\"\(timestamp)\"}}"
        }
    }

    /// An operation read from its JSON.
    init(node: JSONNode) throws {
        func bad(_ why: String) -> SyncFormatError { SyncFormatError(reason: "an operation \(why) (line \(node.location.line), column \(node.location.column))") }
        guard let members = node.members, members.count == 1, let member = members.first else { throw bad("must be an object with one key") }
        let body = member.value
        guard let uuidText = body["uuid"]?.stringValue, let uuid = SyncUUID.parse(uuidText) else { throw bad("needs a \"uuid\"") }
        switch member.key {
        case "Create": self = .create(uuid)
        case "Delete": self = .delete(uuid)
        case "Update":
            guard let property = body["property"]?.stringValue else { throw bad("needs a \"property\"") }
            let value: String?
            switch body["value"]?.kind {
            case .string(let text)?: value = text
            case .null?, nil: value = nil
            default: throw bad("has a \"value\" that is not a string or null")
            }
            guard let stamp = body["timestamp"]?.stringValue, let timestamp = SyncTimestamp(rfc3339: stamp) else { throw bad("needs an RFC 3339 \"timestamp\"") }
            self = .update(uuid, property: property, value: value, timestamp: timestamp)
        default:
            throw bad("of unknown kind \"\(member.key)\"")
        }
    }
}

/// Data from a server (or another replica) that is not what the protocol says, and why.
package struct SyncFormatError: Error, Sendable, CustomStringConvertible {
    package let reason: String
    package var description: String { reason }
}

/// A version's plaintext: `{"operations":[...]}`.
package enum SyncVersion {
    package static func encode(_ operations: [SyncOperation]) -> [UInt8] {
        Array(("{\"operations\":[" + operations.map(\.json).joined(separator: ",") + "]}").utf8)
    }

    package static func decode(_ bytes: [UInt8]) throws -> [SyncOperation] {
        // The shape replicas write, read straight from the bytes; anything else (an escape
        // other than the short ones, another key, a syntax error) goes to the JSON parser,
        // which reads every valid version and names what is wrong with the others.
        if let operations = bytes.withUnsafeBufferPointer({ buffer -> [SyncOperation]? in
            var reader = OperationsReader(bytes: buffer)
            return reader.read()
        }) {
            return operations
        }
        return try parse(bytes)
    }

    /// A version read by the JSON parser (every valid one; errors name what is wrong).
    static func parse(_ bytes: [UInt8]) throws -> [SyncOperation] {
        let root: JSONNode
        do {
            root = try JSONParser.parse(bytes)
        } catch {
            throw SyncFormatError(reason: "a version is not JSON: \(error)")
        }
        guard let items = root["operations"]?.elements else { throw SyncFormatError(reason: "a version needs \"operations\", an array") }
        return try items.map(SyncOperation.init(node:))
    }
}

/// Reads `{"operations":[...]}` as replicas write it, without building a JSON tree: a
/// version of 80,000 operations spent most of its reading in the tree. Nil at anything it
/// does not expect, for the JSON parser to read instead.
struct OperationsReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    mutating func skipSpace() {
        while position < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[position]) { position += 1 }
    }

    /// The next byte after spaces, consumed when it is `byte`.
    mutating func take(_ byte: UInt8) -> Bool {
        skipSpace()
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    /// A string; nil at a `\u` escape or a control character (the JSON parser reads those).
    mutating func string() -> String? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = position
        var escaped = false
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") { break }
            if byte < 0x20 { return nil }
            if byte == UInt8(ascii: "\\") {
                escaped = true
                position += 1
            }
            position += 1
        }
        guard position < bytes.count else { return nil }
        let body = UnsafeBufferPointer(rebasing: bytes[start..<position])
        position += 1
        // Bytes that are not UTF-8 are the JSON parser's to refuse.
        if body.contains(where: { $0 >= 0x80 }), String(validating: body, as: UTF8.self) == nil { return nil }
        guard escaped else { return String(decoding: body, as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(body.count)
        var i = 0
        while i < body.count {
            var byte = body[i]
            if byte == UInt8(ascii: "\\") {
                i += 1
                guard i < body.count else { return nil }
                switch body[i] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): byte = body[i]
                case UInt8(ascii: "b"): byte = 0x08
                case UInt8(ascii: "f"): byte = 0x0C
                case UInt8(ascii: "n"): byte = 0x0A
                case UInt8(ascii: "r"): byte = 0x0D
                case UInt8(ascii: "t"): byte = 0x09
                default: return nil
                }
            }
            out.append(byte)
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    mutating func read() -> [SyncOperation]? {
        guard take(UInt8(ascii: "{")), string() == "operations", take(UInt8(ascii: ":")), take(UInt8(ascii: "[")) else { return nil }
        var operations: [SyncOperation] = []
        if take(UInt8(ascii: "]")) { return take(UInt8(ascii: "}")) && atEnd() ? operations : nil }
        repeat {
            guard let operation = readOperation() else { return nil }
            operations.append(operation)
        } while take(UInt8(ascii: ","))
        guard take(UInt8(ascii: "]")), take(UInt8(ascii: "}")), atEnd() else { return nil }
        return operations
    }

    mutating func atEnd() -> Bool {
        skipSpace()
        return position == bytes.count
    }

    /// `{"Create"|"Delete"|"Update": {members}}`.
    mutating func readOperation() -> SyncOperation? {
        guard take(UInt8(ascii: "{")), let kind = string(), take(UInt8(ascii: ":")), take(UInt8(ascii: "{")) else { return nil }
        var uuid: UUID?, property: String?, timestamp: SyncTimestamp?
        var value: String?, sawValue = false
        if !take(UInt8(ascii: "}")) {
            repeat {
                guard let key = string(), take(UInt8(ascii: ":")) else { return nil }
                switch key {
                case "uuid":
                    guard uuid == nil, let text = string(), let parsed = SyncUUID.parse(text) else { return nil }
                    uuid = parsed
                case "property":
                    guard property == nil, let text = string() else { return nil }
                    property = text
                case "timestamp":
                    guard timestamp == nil, let text = string(), let parsed = SyncTimestamp(rfc3339: text) else { return nil }
                    timestamp = parsed
                case "value":
                    guard !sawValue else { return nil }
                    sawValue = true
                    skipSpace()
                    if bytes[safe: position] == UInt8(ascii: "n") {
                        guard position + 4 <= bytes.count, bytes[position + 1] == UInt8(ascii: "u"), bytes[position + 2] == UInt8(ascii: "l"),
                              bytes[position + 3] == UInt8(ascii: "l") else { return nil }
                        position += 4
                    } else {
                        guard let text = string() else { return nil }
                        value = text
                    }
                default:
                    return nil
                }
            } while take(UInt8(ascii: ","))
            guard take(UInt8(ascii: "}")) else { return nil }
        }
        guard take(UInt8(ascii: "}")), let uuid else { return nil }
        switch kind {
        case "Create": return property == nil && timestamp == nil && !sawValue ? .create(uuid) : nil
        case "Delete": return property == nil && timestamp == nil && !sawValue ? .delete(uuid) : nil
        case "Update":
            guard let property, let timestamp else { return nil }
            return .update(uuid, property: property, value: value, timestamp: timestamp)
        default: return nil
        }
    }
}

extension UnsafeBufferPointer where Element == UInt8 {
    subscript(safe index: Int) -> UInt8? { index < count ? self[index] : nil }
}

/// A snapshot's plaintext: zlib-compressed JSON `{uuid: {key: value}}` of every task.
package enum SyncSnapshot {
    package static func encode(_ tasks: [(uuid: UUID, properties: [(key: String, value: String)])]) -> [UInt8] {
        var text = "{"
        for (index, task) in tasks.enumerated() {
            if index > 0 { text += "," }
            text += "\"\(task.uuid.uuidString.lowercased())\":{"
            text += task.properties.map { "\(JSONText.quote($0.key)):\(JSONText.quote($0.value))" }.joined(separator: ",")
            text += "}"
        }
        return Zlib.compress(Array((text + "}").utf8))
    }

    package static func decode(_ bytes: [UInt8]) throws -> [(uuid: UUID, properties: [(key: String, value: String)])] {
        let text: [UInt8]
        do {
            text = try Zlib.decompress(bytes)
        } catch {
            throw SyncFormatError(reason: "a snapshot is not zlib data: \(error)")
        }
        let root: JSONNode
        do {
            root = try JSONParser.parse(text)
        } catch {
            throw SyncFormatError(reason: "a snapshot is not JSON: \(error)")
        }
        guard let members = root.members else { throw SyncFormatError(reason: "a snapshot must be a JSON object of tasks") }
        return try members.map { member in
            guard let uuid = SyncUUID.parse(member.key) else { throw SyncFormatError(reason: "a snapshot's task key \"\(member.key)\" is not a UUID") }
            guard let properties = member.value.members else { throw SyncFormatError(reason: "task \(member.key) of a snapshot must be an object") }
            return (uuid, try properties.map { property in
                guard let value = property.value.stringValue else { throw SyncFormatError(reason: "\(member.key).\(property.key) of a snapshot must be a string") }
                return (property.key, value)
            })
        }
    }
}

/// UUIDs in their 36-character form, read in place: Foundation's parser (sscanf) was the
/// largest single cost of reading a version of 10,000 tasks (and a twentieth of an import).
/// Any other text goes to Foundation, so the same texts are accepted.
package enum SyncUUID {
    package static func parse(_ text: String) -> UUID? {
        var text = text
        return text.withUTF8 { bytes -> UUID? in
            guard bytes.count == 36 else { return nil }
            var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            let valid = withUnsafeMutableBytes(of: &raw) { target -> Bool in
                var position = 0
                for k in 0..<16 {
                    if position == 8 || position == 13 || position == 18 || position == 23 {
                        guard bytes[position] == UInt8(ascii: "-") else { return false }
                        position += 1
                    }
                    func nibble(_ byte: UInt8) -> UInt8? {
                        switch byte {
                        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
                        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
                        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
                        default: return nil
                        }
                    }
                    guard let high = nibble(bytes[position]), let low = nibble(bytes[position + 1]) else { return false }
                    target[k] = high << 4 | low
                    position += 2
                }
                return true
            }
            return valid ? UUID(uuid: raw) : nil
        } ?? UUID(uuidString: text)
    }
}
