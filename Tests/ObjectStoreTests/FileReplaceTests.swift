import Foundation
import Testing
@testable import ObjectStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Replacing a file from pieces, one of them a range of another open file (how a cut log
/// keeps the snapshot's bytes without reading them into memory).
@Suite struct FileReplaceTests {
    /// Bytes of a source file copied between two pieces in memory land exactly where they
    /// belong, whatever the offsets, and the file keeps its mode.
    @Test func aCopiedRangeLandsBetweenTheOtherPieces() throws {
        let directory = try TemporaryDirectory()
        let source = directory.file("source").path
        let pattern = (0..<3_000_001).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
        try Data(pattern).write(to: URL(fileURLWithPath: source))
        let target = directory.file("target").path
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: target))
        chmod(target, 0o640)
        let fd = open(source, O_RDONLY | O_CLOEXEC)
        #expect(fd >= 0)
        defer { close(fd) }
        let replaced = try FileIO.replace(target, with: [.bytes([9, 9, 9, 9, 9]), .copied(fd: fd, offset: 77, count: 2_500_000), .bytes([7])])
        close(replaced)
        let written = [UInt8](try Data(contentsOf: URL(fileURLWithPath: target)))
        #expect(written.count == 5 + 2_500_000 + 1)
        #expect(written.prefix(5) == [9, 9, 9, 9, 9])
        #expect(written.last == 7)
        #expect(Array(written[5..<2_500_005]) == Array(pattern[77..<2_500_077]))
        var info = stat()
        #expect(stat(target, &info) == 0 && info.st_mode & 0o777 == 0o640)
    }

    /// A range past the end of its file is refused: the file replaced stays as it was and no
    /// temporary file is left beside it.
    @Test func aRangePastTheEndLeavesTheFileAsItWas() throws {
        let directory = try TemporaryDirectory()
        let source = directory.file("source").path
        try Data(repeating: 5, count: 1_000).write(to: URL(fileURLWithPath: source))
        let target = directory.file("target").path
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: target))
        let fd = open(source, O_RDONLY | O_CLOEXEC)
        #expect(fd >= 0)
        defer { close(fd) }
        #expect(throws: StoreError.self) {
            close(try FileIO.replace(target, with: [.bytes([0]), .copied(fd: fd, offset: 500, count: 501)]))
        }
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: target))) == [1, 2, 3])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == ["source", "target"])
    }
}
