import Foundation
import Testing
@testable import ObjectStoreStorage

/// History records forged with a right checksum (whoever can write the file can compute
/// one): a transaction that does not decode is reported by `store check` and dropped by
/// `store repair`, the tasks kept; a run of inserts claiming more keys than the store ever
/// gave out is damage, never 10^8 changes built in memory or an undo of tasks it never made.
@Suite(.enabled(if: TaskctlRunner.binary != nil, "needs the built taskctl (swift build)"))
struct ForgedHistoryTests {
    /// Appends one commit holding a transaction record with `body` to the store's file (a
    /// commit not claimed by the header yet, which readers take when its checksum is right).
    static func appendTransaction(_ body: [UInt8], to url: URL) throws {
        var payload = ByteWriter()
        payload.u8(BinaryStore.RecordTag.transaction)
        payload.varint(UInt64(body.count))
        payload.bytes.append(contentsOf: body)
        let handle = try FileHandle(forWritingTo: url)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(BinaryStore.frame(payload.bytes)))
        try handle.close()
    }

    /// A transaction's head as a store writes it: number, time, author, name, process.
    static func head(number: Int64) -> ByteWriter {
        var body = ByteWriter()
        body.signed(number)
        body.u64(Date(timeIntervalSince1970: 1_795_348_800).timeIntervalSinceReferenceDate.bitPattern)
        body.string("taskctl")
        body.string("add")
        body.varint(1)
        return body
    }

    @Test func aTransactionThatDoesNotDecodeIsReportedAndRepairedKeepingTheTasks() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "first")
        try t.ok("add", "second", "--tag", "x")
        var body = Self.head(number: 3)
        body.bytes.append(contentsOf: [0x7F, 0xFF, 0xFF, 0xFF, 0x0F])  // a change count past the bytes
        try Self.appendTransaction(body.bytes, to: t.store)

        let log = try t.run("log")
        #expect(log.status == 2 && log.err.contains("store check"), "\(log.err)")
        let check = try t.run("store", "check")
        #expect(check.status == 2 && check.err.contains("transaction 3 of the history does not decode") && check.err.contains("store repair"), "\(check.err)")
        let repaired = try t.ok("store", "repair")
        #expect(repaired.contains("up to transaction #3"), "\(repaired)")
        #expect(try t.ok("store", "check").hasPrefix("ok: "))
        #expect(try t.texts().sorted() == ["first", "second"])
        #expect(try t.run("log").status == 0)
        #expect(try t.ok("store", "repair").contains("nothing to repair"))
        // The history goes on after it: the next change is undone as usual.
        try t.ok("add", "third")
        #expect(try t.ok("undo") == "undid add of task 3\n")
        #expect(try t.texts().sorted() == ["first", "second"])
    }

    @Test func aRunOfInsertsPastTheKeysGivenOutIsDamageNotHundredsOfMillionsOfChanges() throws {
        let t = try TaskctlRunner()
        try t.ok("add", "first")
        try t.ok("add", "second")
        var body = Self.head(number: 3)
        body.varint(1)                      // one change:
        body.u8(4)                          // a run of inserts
        body.varint(0)                      // of the first entity,
        body.signed(1)                      // from key 1,
        body.varint(100_000_000)            // 10^8 of them
        try Self.appendTransaction(body.bytes, to: t.store)
        let log = try t.run("log", "--limit", "1")
        #expect(log.status == 2, "\(log.out.prefix(200))")
        let undo = try t.run("undo")
        #expect(undo.status == 2, "\(undo.out)")
        #expect(try t.texts().sorted() == ["first", "second"])
        #expect(try t.run("store", "check").err.contains("transaction 3 of the history does not decode"))
        try t.ok("store", "repair")
        #expect(try t.texts().sorted() == ["first", "second"])
    }
}
