/// zlib streams (RFC 1950) of DEFLATE data (RFC 1951), as TaskChampion compresses its
/// snapshots: `compress` writes fixed-Huffman blocks of LZ77 matches, `decompress` reads
/// any valid stream (stored, fixed and dynamic blocks).
package enum Zlib {
    /// A stream that is not valid zlib data, with where and why.
    package struct DataError: Error, Sendable, CustomStringConvertible {
        package let reason: String
        package var description: String { "invalid zlib data: \(reason)" }
    }

    /// The zlib stream of `data`.
    package static func compress(_ data: [UInt8]) -> [UInt8] {
        var out = BitWriter()
        out.bytes = [0x78, 0x9C]
        Deflate.fixed(data, into: &out)
        out.flushByte()
        let adler = adler32(data)
        out.bytes += [UInt8(adler >> 24), UInt8(adler >> 16 & 0xFF), UInt8(adler >> 8 & 0xFF), UInt8(adler & 0xFF)]
        return out.bytes
    }

    /// The data of a zlib stream; at most `limit` bytes (a bound against a stream built to
    /// expand without end).
    ///
    /// - Throws: ``DataError`` for a stream that is damaged, truncated, of another
    ///   compression method, or longer than `limit` once decompressed.
    package static func decompress(_ stream: [UInt8], limit: Int = 1 << 30) throws -> [UInt8] {
        guard stream.count >= 6 else { throw DataError(reason: "too short") }
        let cmf = stream[0], flg = stream[1]
        guard cmf & 0x0F == 8, cmf >> 4 <= 7 else { throw DataError(reason: "not DEFLATE") }
        guard (UInt16(cmf) << 8 | UInt16(flg)) % 31 == 0 else { throw DataError(reason: "header check failed") }
        guard flg & 0x20 == 0 else { throw DataError(reason: "a preset dictionary is not supported") }
        var reader = BitReader(bytes: stream, position: 2)
        let data = try Inflate.run(&reader, limit: limit)
        reader.alignToByte()
        guard reader.position + 4 <= stream.count else { throw DataError(reason: "the checksum is missing") }
        let expected = stream[reader.position..<reader.position + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard adler32(data) == expected else { throw DataError(reason: "the checksum does not match") }
        return data
    }

    /// Adler-32 (RFC 1950).
    static func adler32(_ data: [UInt8]) -> UInt32 {
        var a: UInt32 = 1, b: UInt32 = 0
        var index = 0
        while index < data.count {
            let end = min(data.count, index + 5552)
            while index < end {
                a &+= UInt32(data[index])
                b &+= a
                index += 1
            }
            a %= 65521
            b %= 65521
        }
        return b << 16 | a
    }
}

struct BitWriter {
    var bytes: [UInt8] = []
    private var buffer: UInt32 = 0
    private var count: UInt32 = 0

    /// Writes the low `n` bits of `value`, least significant first.
    mutating func write(_ value: UInt32, bits n: UInt32) {
        buffer |= value << count
        count += n
        while count >= 8 {
            bytes.append(UInt8(buffer & 0xFF))
            buffer >>= 8
            count -= 8
        }
    }

    /// Writes a Huffman code (most significant bit first).
    mutating func writeCode(_ code: UInt32, length: UInt32) {
        var reversed: UInt32 = 0
        for i in 0..<length { reversed |= (code >> i & 1) << (length - 1 - i) }
        write(reversed, bits: length)
    }

    mutating func flushByte() {
        if count > 0 { bytes.append(UInt8(buffer & 0xFF)) }
        buffer = 0
        count = 0
    }
}

struct BitReader {
    let bytes: [UInt8]
    var position: Int
    private var buffer: UInt32 = 0
    private var count: UInt32 = 0

    init(bytes: [UInt8], position: Int) {
        self.bytes = bytes
        self.position = position
    }

    mutating func read(_ n: UInt32) throws -> UInt32 {
        while count < n {
            guard position < bytes.count else { throw Zlib.DataError(reason: "truncated") }
            buffer |= UInt32(bytes[position]) << count
            position += 1
            count += 8
        }
        let value = n == 32 ? buffer : buffer & ((1 << n) - 1)
        buffer = n == 32 ? 0 : buffer >> n
        count -= n
        return value
    }

    /// Drops the bits left of the current byte.
    mutating func alignToByte() {
        buffer = 0
        count = 0
    }
}

/// The code lengths' canonical Huffman codes (RFC 1951, 3.2.2), and decoding with them.
struct Huffman {
    /// Per length, how many codes have it; symbols in code order.
    var counts = [Int](repeating: 0, count: 16)
    var symbols: [Int] = []

    init(lengths: [Int]) throws {
        for length in lengths { counts[length] += 1 }
        counts[0] = 0
        var left = 1
        for length in 1..<16 {
            left <<= 1
            left -= counts[length]
            guard left >= 0 else { throw Zlib.DataError(reason: "an over-subscribed code") }
        }
        var offsets = [Int](repeating: 0, count: 16)
        for length in 1..<15 { offsets[length + 1] = offsets[length] + counts[length] }
        symbols = [Int](repeating: 0, count: lengths.count)
        for (symbol, length) in lengths.enumerated() where length != 0 {
            symbols[offsets[length]] = symbol
            offsets[length] += 1
        }
    }

    func decode(_ reader: inout BitReader) throws -> Int {
        var code = 0, first = 0, index = 0
        for length in 1..<16 {
            code |= Int(try reader.read(1))
            let count = counts[length]
            if code - count < first { return symbols[index + (code - first)] }
            index += count
            first += count
            first <<= 1
            code <<= 1
        }
        throw Zlib.DataError(reason: "an invalid code")
    }
}

enum Inflate {
    static let lengthBase = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
    static let lengthExtra = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    static let distanceBase = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073,
                               4097, 6145, 8193, 12289, 16385, 24577]
    static let distanceExtra = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]

    static func fixedCodes() throws -> (Huffman, Huffman) {
        var lengths = [Int](repeating: 8, count: 288)
        for i in 144..<256 { lengths[i] = 9 }
        for i in 256..<280 { lengths[i] = 7 }
        return (try Huffman(lengths: lengths), try Huffman(lengths: [Int](repeating: 5, count: 30)))
    }

    static func run(_ reader: inout BitReader, limit: Int) throws -> [UInt8] {
        var out: [UInt8] = []
        var last = false
        while !last {
            last = try reader.read(1) == 1
            switch try reader.read(2) {
            case 0:
                reader.alignToByte()
                guard reader.position + 4 <= reader.bytes.count else { throw Zlib.DataError(reason: "truncated") }
                let length = Int(reader.bytes[reader.position]) | Int(reader.bytes[reader.position + 1]) << 8
                let complement = Int(reader.bytes[reader.position + 2]) | Int(reader.bytes[reader.position + 3]) << 8
                guard length == ~complement & 0xFFFF else { throw Zlib.DataError(reason: "a stored block's length check failed") }
                reader.position += 4
                guard reader.position + length <= reader.bytes.count else { throw Zlib.DataError(reason: "truncated") }
                guard out.count + length <= limit else { throw Zlib.DataError(reason: "longer than \(limit) bytes") }
                out += reader.bytes[reader.position..<reader.position + length]
                reader.position += length
            case 1:
                let (literals, distances) = try fixedCodes()
                try codes(&reader, literals, distances, into: &out, limit: limit)
            case 2:
                let (literals, distances) = try dynamicCodes(&reader)
                try codes(&reader, literals, distances, into: &out, limit: limit)
            default:
                throw Zlib.DataError(reason: "a reserved block type")
            }
        }
        return out
    }

    static func dynamicCodes(_ reader: inout BitReader) throws -> (Huffman, Huffman) {
        let literalCount = Int(try reader.read(5)) + 257
        let distanceCount = Int(try reader.read(5)) + 1
        let codeCount = Int(try reader.read(4)) + 4
        guard literalCount <= 286, distanceCount <= 30 else { throw Zlib.DataError(reason: "too many codes") }
        let order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]
        var codeLengths = [Int](repeating: 0, count: 19)
        for i in 0..<codeCount { codeLengths[order[i]] = Int(try reader.read(3)) }
        let lengthCode = try Huffman(lengths: codeLengths)
        var lengths: [Int] = []
        while lengths.count < literalCount + distanceCount {
            let symbol = try lengthCode.decode(&reader)
            switch symbol {
            case 0...15: lengths.append(symbol)
            case 16:
                guard let previous = lengths.last else { throw Zlib.DataError(reason: "a repeat with nothing before it") }
                lengths += [Int](repeating: previous, count: 3 + Int(try reader.read(2)))
            case 17: lengths += [Int](repeating: 0, count: 3 + Int(try reader.read(3)))
            default: lengths += [Int](repeating: 0, count: 11 + Int(try reader.read(7)))
            }
        }
        guard lengths.count == literalCount + distanceCount else { throw Zlib.DataError(reason: "code lengths overrun") }
        guard lengths[256] != 0 else { throw Zlib.DataError(reason: "no end-of-block code") }
        return (try Huffman(lengths: Array(lengths[0..<literalCount])), try Huffman(lengths: Array(lengths[literalCount...])))
    }

    static func codes(_ reader: inout BitReader, _ literals: Huffman, _ distances: Huffman, into out: inout [UInt8], limit: Int) throws {
        while true {
            let symbol = try literals.decode(&reader)
            if symbol < 256 {
                guard out.count < limit else { throw Zlib.DataError(reason: "longer than \(limit) bytes") }
                out.append(UInt8(symbol))
            } else if symbol == 256 {
                return
            } else {
                let index = symbol - 257
                guard index < 29 else { throw Zlib.DataError(reason: "an invalid length code") }
                let length = lengthBase[index] + Int(try reader.read(UInt32(lengthExtra[index])))
                let distanceSymbol = try distances.decode(&reader)
                guard distanceSymbol < 30 else { throw Zlib.DataError(reason: "an invalid distance code") }
                let distance = distanceBase[distanceSymbol] + Int(try reader.read(UInt32(distanceExtra[distanceSymbol])))
                guard distance <= out.count else { throw Zlib.DataError(reason: "a distance before the start") }
                guard out.count + length <= limit else { throw Zlib.DataError(reason: "longer than \(limit) bytes") }
                let start = out.count - distance
                for i in 0..<length { out.append(out[start + i]) }
            }
        }
    }
}

enum Deflate {
    /// One fixed-Huffman block of the data: greedy LZ77 with hash chains over a 32 KB window.
    static func fixed(_ data: [UInt8], into out: inout BitWriter) {
        out.write(1, bits: 1)  // the last block
        out.write(1, bits: 2)  // fixed Huffman codes
        func literal(_ value: Int) {
            switch value {
            case 0...143: out.writeCode(UInt32(0x30 + value), length: 8)
            case 144...255: out.writeCode(UInt32(0x190 + value - 144), length: 9)
            case 256...279: out.writeCode(UInt32(value - 256), length: 7)
            default: out.writeCode(UInt32(0xC0 + value - 280), length: 8)
            }
        }
        func match(length: Int, distance: Int) {
            var code = 28
            while Inflate.lengthBase[code] > length { code -= 1 }
            literal(257 + code)
            out.write(UInt32(length - Inflate.lengthBase[code]), bits: UInt32(Inflate.lengthExtra[code]))
            var distanceCode = 29
            while Inflate.distanceBase[distanceCode] > distance { distanceCode -= 1 }
            out.writeCode(UInt32(distanceCode), length: 5)
            out.write(UInt32(distance - Inflate.distanceBase[distanceCode]), bits: UInt32(Inflate.distanceExtra[distanceCode]))
        }
        let window = 32_768, maxChain = 64
        var head = [Int](repeating: -1, count: 1 << 15)
        var previous = [Int](repeating: -1, count: data.count)
        func hash(_ i: Int) -> Int { (Int(data[i]) << 10 ^ Int(data[i + 1]) << 5 ^ Int(data[i + 2])) & 0x7FFF }
        func insert(_ i: Int) {
            guard i + 2 < data.count else { return }
            let h = hash(i)
            previous[i] = head[h]
            head[h] = i
        }
        var i = 0
        while i < data.count {
            var bestLength = 0, bestDistance = 0
            if i + 2 < data.count {
                var candidate = head[hash(i)]
                var chain = 0
                while candidate >= 0 && i - candidate <= window && chain < maxChain {
                    var length = 0
                    while length < 258 && i + length < data.count && data[candidate + length] == data[i + length] { length += 1 }
                    if length > bestLength {
                        bestLength = length
                        bestDistance = i - candidate
                        if length == 258 { break }
                    }
                    candidate = previous[candidate]
                    chain += 1
                }
            }
            if bestLength >= 3 {
                match(length: bestLength, distance: bestDistance)
                for j in i..<i + bestLength { insert(j) }
                i += bestLength
            } else {
                literal(Int(data[i]))
                insert(i)
                i += 1
            }
        }
        literal(256)
    }
}
