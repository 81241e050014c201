import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A file's bytes read straight into one array with the system's calls: FileManager's
/// `contents(atPath:)` cost a configuration file of five lines as much as 40,000
/// instructions of a command's start, and a `Data` and an array made of it held a large
/// import's file twice.
enum FileBytes {
    /// The bytes of the file at `path`, read to the end (a pipe, or a file still growing, is
    /// read whole); nil when it cannot be opened or read (missing, a directory, no
    /// permission).
    static func contents(of path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        let size = max(0, Int(info.st_size))
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size)
        // A chunk the file's size and one more byte (so its end is met in one more read), at
        // most 4 MiB: a small file is not read through megabytes of zeroed memory.
        var chunk = [UInt8](repeating: 0, count: min(1 << 22, max(4096, size + 1)))
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[..<count])
        }
    }

    /// The file's text as UTF-8, a byte-order mark at its start left out (as Foundation's
    /// decoding leaves it out); nil when it cannot be read, `.some(nil)` when it is not UTF-8.
    static func text(_ path: String) -> String?? {
        guard let bytes = contents(of: path) else { return nil }
        let body = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? bytes[3...] : bytes[...]
        return .some(String(validating: body, as: UTF8.self))
    }
}
