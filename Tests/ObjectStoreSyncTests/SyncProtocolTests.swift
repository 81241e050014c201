import Foundation
import Testing
@testable import ObjectStoreSync

@Suite struct SyncProtocolTests {
    @Test func timestampsReadAndWriteRFC3339ToTheNanosecond() throws {
        let stamp = try #require(SyncTimestamp(rfc3339: "2024-05-01T12:34:56.123456789Z"))
        #expect(stamp.seconds == 1_714_566_896 && stamp.nanoseconds == 123_456_789)
        #expect(stamp.description == "2024-05-01T12:34:56.123456789Z")
        #expect(SyncTimestamp(rfc3339: "2024-05-01T12:34:56Z")?.description == "2024-05-01T12:34:56Z")
        #expect(SyncTimestamp(rfc3339: "2024-05-01T12:34:56.5Z")?.description == "2024-05-01T12:34:56.500Z")
        #expect(SyncTimestamp(rfc3339: "2024-05-01T14:34:56.000001+02:00")?.description == "2024-05-01T12:34:56.000001Z")
        #expect(SyncTimestamp(rfc3339: "1969-12-31T23:59:59Z")?.seconds == -1)
        #expect(SyncTimestamp(rfc3339: "2000-02-29T00:00:00Z")?.seconds == 951_782_400)
        for bad in ["", "2024-05-01", "2024-13-01T00:00:00Z", "2024-05-01T12:34:56", "2024-05-01T12:34:56.Z", "2024-05-01T12:34:56Zjunk"] {
            #expect(SyncTimestamp(rfc3339: bad) == nil, "\(bad)")
        }
        let oneNanosecondIn = try #require(SyncTimestamp(rfc3339: "2024-05-01T12:34:56.000000001Z"))
        #expect(oneNanosecondIn < stamp && SyncTimestamp(seconds: stamp.seconds, nanoseconds: stamp.nanoseconds + 1) > stamp)
        #expect(SyncTimestamp(Date(timeIntervalSince1970: 1_714_566_896.25)).description == "2024-05-01T12:34:56.250Z")
    }

    /// TaskChampion's rules for concurrent operations, case by case.
    @Test func concurrentOperationsTransformAsTaskChampionDoes() {
        let a = UUID(), b = UUID()
        let early = SyncTimestamp(seconds: 100), late = SyncTimestamp(seconds: 200)
        let updateA = SyncOperation.update(a, property: "description", value: "one", timestamp: early)
        let laterA = SyncOperation.update(a, property: "description", value: "two", timestamp: late)
        let sameValue = SyncOperation.update(a, property: "description", value: "one", timestamp: late)
        let otherProperty = SyncOperation.update(a, property: "priority", value: "H", timestamp: early)
        typealias T = (SyncOperation?, SyncOperation?)
        func same(_ x: T, _ y: T) -> Bool { x.0 == y.0 && x.1 == y.1 }
        #expect(same(SyncOperation.transform(.create(a), .create(a)), (nil, nil)))
        #expect(same(SyncOperation.transform(.delete(a), .delete(a)), (nil, nil)))
        #expect(same(SyncOperation.transform(.create(a), .delete(a)), (.create(a), nil)))
        #expect(same(SyncOperation.transform(.delete(a), .create(a)), (nil, .create(a))))
        #expect(same(SyncOperation.transform(updateA, .create(a)), (updateA, nil)))
        #expect(same(SyncOperation.transform(.create(a), updateA), (nil, updateA)))
        #expect(same(SyncOperation.transform(updateA, .delete(a)), (nil, .delete(a))))
        #expect(same(SyncOperation.transform(.delete(a), updateA), (.delete(a), nil)))
        #expect(same(SyncOperation.transform(updateA, laterA), (nil, laterA)))
        #expect(same(SyncOperation.transform(laterA, updateA), (laterA, nil)))
        #expect(same(SyncOperation.transform(updateA, sameValue), (nil, nil)))
        #expect(same(SyncOperation.transform(updateA, otherProperty), (updateA, otherProperty)))
        #expect(same(SyncOperation.transform(.create(a), .delete(b)), (.create(a), .delete(b))))
    }

    /// Versions and snapshots as the Rust replica writes them (serde's JSON, zlib), made
    /// and read by Python's json and zlib.
    @Test(.enabled(if: PythonCheck.available, PythonCheck.skipReason))
    func versionsAndSnapshotsAgreeWithTheProtocolsJSON() throws {
        let task = UUID(uuidString: "4e4e2a3b-77a0-4f43-9d8e-8a3a5c3b9a11")!
        let operations: [SyncOperation] = [
            .create(task),
            .update(task, property: "description", value: "Buy milk \"and\" eggs ☕", timestamp: SyncTimestamp(seconds: 1_714_566_896, nanoseconds: 123_456_789)),
            .update(task, property: "tag_shop", value: "", timestamp: SyncTimestamp(seconds: 1_714_566_897)),
            .update(task, property: "due", value: nil, timestamp: SyncTimestamp(seconds: 1_714_566_898, nanoseconds: 500_000_000)),
            .delete(task),
        ]
        let snapshot = SyncSnapshot.encode([(task, [("description", "Buy milk"), ("status", "pending"), ("udа_custom", "kept")])])
        let script = """
            import sys, json, zlib
            version, snapshot = sys.stdin.read().split(" ")
            ops = json.loads(bytes.fromhex(version))["operations"]
            assert ops[0] == {"Create": {"uuid": "4e4e2a3b-77a0-4f43-9d8e-8a3a5c3b9a11"}}, ops[0]
            assert ops[1]["Update"]["value"] == 'Buy milk "and" eggs ☕' and ops[1]["Update"]["timestamp"] == "2024-05-01T12:34:56.123456789Z"
            assert ops[3]["Update"]["value"] is None and ops[4] == {"Delete": {"uuid": "4e4e2a3b-77a0-4f43-9d8e-8a3a5c3b9a11"}}
            tasks = json.loads(zlib.decompress(bytes.fromhex(snapshot)))
            assert tasks == {"4e4e2a3b-77a0-4f43-9d8e-8a3a5c3b9a11": {"description": "Buy milk", "status": "pending", "udа_custom": "kept"}}, tasks
            theirs = {"operations": [{"Update": {"uuid": "4e4e2a3b-77a0-4f43-9d8e-8a3a5c3b9a11", "property": "priority", "value": "H", "timestamp": "2024-05-01T12:00:00.000001Z"}}]}
            print(json.dumps(theirs, separators=(",", ":")).encode().hex())
            print(zlib.compress(json.dumps({"4e4e2a3b-77a0-4f43-9d8e-8a3a5c3b9a11": {"description": "From Rust", "dep_1": ""}}).encode(), 9).hex())
            """
        let output = try PythonCheck.run(script, input: hexText(SyncVersion.encode(operations)) + " " + hexText(snapshot)).split(separator: "\n").map(String.init)
        #expect(try SyncVersion.decode(hex(output[0])) == [.update(task, property: "priority", value: "H", timestamp: SyncTimestamp(seconds: 1_714_564_800, nanoseconds: 1000))])
        let tasks = try SyncSnapshot.decode(hex(output[1]))
        #expect(tasks.count == 1 && tasks[0].uuid == task)
        #expect(tasks[0].properties.map { "\($0.key)=\($0.value)" } == ["description=From Rust", "dep_1="])
        // And ours read back.
        #expect(try SyncVersion.decode(SyncVersion.encode(operations)) == operations)
    }

    @Test func malformedVersionsAndSnapshotsAreRefusedWithAReason() {
        for bad in ["", "[]", "{}", #"{"operations":[{"Frobnicate":{"uuid":"4e4e2a3b-77a0-4f43-9d8e-8a3a5c3b9a11"}}]}"#,
                    #"{"operations":[{"Update":{"uuid":"4e4e2a3b-77a0-4f43-9d8e-8a3a5c3b9a11","property":"x","value":3,"timestamp":"2024-05-01T12:00:00Z"}}]}"#,
                    #"{"operations":[{"Create":{"uuid":"not a uuid"}}]}"#] {
            #expect(throws: SyncFormatError.self, "\(bad)") { try SyncVersion.decode(Array(bad.utf8)) }
        }
        #expect(throws: SyncFormatError.self) { try SyncSnapshot.decode(Array("not zlib".utf8)) }
        #expect(throws: SyncFormatError.self) { try SyncSnapshot.decode(Zlib.compress(Array(#"{"x": {}}"#.utf8))) }
    }

    /// Versions are read straight from their bytes when they have the usual shape; what that
    /// reads is exactly what the JSON parser reads, over random operations (texts with quotes,
    /// backslashes, control characters, accents and emoji, nulls), the same written with
    /// spaces, members in another order, and `\u` escapes; and a version that is not the
    /// usual shape (invalid UTF-8, a duplicate member, an unknown kind) is judged by the parser.
    @Test func theFastReaderReadsWhatTheParserReads() throws {
        var seed: UInt64 = 0x1234_5678
        func next(_ bound: Int) -> Int {
            seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17
            return Int(seed % UInt64(bound))
        }
        let pieces = ["a", "é", "\"", "\\", "\n", "\t", "/", "😀", " ", "\u{01}", "x y", "tag_home"]
        func text() -> String { (0..<next(6)).map { _ in pieces[next(pieces.count)] }.joined() }
        for _ in 0..<300 {
            var operations: [SyncOperation] = []
            for _ in 0..<next(20) {
                let uuid = UUID()
                switch next(3) {
                case 0: operations.append(.create(uuid))
                case 1: operations.append(.delete(uuid))
                default:
                    operations.append(.update(uuid, property: text(), value: next(4) == 0 ? nil : text(),
                                              timestamp: SyncTimestamp(seconds: Int64(1_700_000_000 + next(100_000_000)), nanoseconds: Int32(next(1_000_000_000)))))
                }
            }
            let bytes = SyncVersion.encode(operations)
            #expect(try SyncVersion.decode(bytes) == operations)
            #expect(try SyncVersion.parse(bytes) == operations)
            // Read by the fast reader itself, not handed to the parser (but for `\u` escapes,
            // which are the parser's).
            let fast = bytes.withUnsafeBufferPointer { buffer -> [SyncOperation]? in
                var reader = OperationsReader(bytes: buffer)
                return reader.read()
            }
            let hasUnicodeEscape = String(decoding: bytes, as: UTF8.self).contains("\\u")
            #expect(hasUnicodeEscape ? fast == nil : fast == operations)
        }
        let uuid = "5f22baa0-9935-4240-86ab-6bd2b598479d"
        let spaced = " {\n \"operations\" : [ { \"Update\" : { \"timestamp\" : \"2026-11-22T10:00:00Z\", \"value\" : null , \"property\" : \"due\", \"uuid\" : \"\(uuid)\" } } ,\n {\"Create\":{\"uuid\":\"\(uuid)\"}} ] } \n"
        #expect(try SyncVersion.decode(Array(spaced.utf8)) == SyncVersion.parse(Array(spaced.utf8)))
        #expect(try SyncVersion.decode(Array(spaced.utf8)).count == 2)
        let escaped = #"{"operations":[{"Update":{"uuid":"\#(uuid)","property":"description","value":"caf\u00e9 \ud83d\ude00","timestamp":"2026-11-22T10:00:00Z"}}]}"#
        #expect(try SyncVersion.decode(Array(escaped.utf8)) == [.update(try #require(UUID(uuidString: uuid)), property: "description", value: "café 😀",
                                                                         timestamp: SyncTimestamp(seconds: 1_795_341_600))])
        var invalid = Array(#"{"operations":[{"Update":{"uuid":"\#(uuid)","property":"description","value":"x","timestamp":"2026-11-22T10:00:00Z"}}]}"#.utf8)
        invalid[invalid.firstIndex(of: UInt8(ascii: "x"))!] = 0xFF
        #expect(throws: SyncFormatError.self) { try SyncVersion.decode(invalid) }
        #expect(throws: SyncFormatError.self) { try SyncVersion.decode(Array(#"{"operations":[{"Rename":{"uuid":"\#(uuid)"}}]}"#.utf8)) }
    }
}
