import Foundation
import Testing
@testable import ObjectStoreSync
import ObjectStoreSyncNetworking

@Suite(.enabled(if: PythonCheck.available, PythonCheck.skipReason))
struct HTTPSyncServerTests {
    static let key = PBKDF2.sha256(password: Array("secret".utf8), salt: Array(repeating: 1, count: 16), iterations: 1, length: 32)

    func replica(_ server: ProtocolServer, client: UUID, key: [UInt8] = HTTPSyncServerTests.key) -> HTTPSyncServer {
        HTTPSyncServer(url: server.url, clientID: client, cryptor: SyncCryptor(key: key), transport: URLSessionTransport())
    }

    @Test func versionsChainOnTheLatestAndConflictsNameIt() async throws {
        let server = try ProtocolServer()
        let client = UUID()
        let a = replica(server, client: client), b = replica(server, client: client)
        let nilVersion = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        let task = UUID()
        let first: [SyncOperation] = [.create(task), .update(task, property: "description", value: "milk", timestamp: SyncTimestamp(seconds: 1_714_566_896))]
        #expect(try a.childVersion(of: nilVersion) == .upToDate)
        guard case .added(let v1, _) = try a.addVersion(parent: nilVersion, operations: first) else {
            Issue.record("the first version was not added")
            return
        }
        // b still thinks the chain is empty: the server names the version to build on.
        #expect(try b.addVersion(parent: nilVersion, operations: [.create(UUID())]) == .conflict(expectedParent: v1))
        #expect(try b.childVersion(of: nilVersion) == .version(id: v1, parent: nilVersion, operations: first))
        #expect(try b.childVersion(of: v1) == .upToDate)
        // A version the server does not know: gone.
        #expect(try b.childVersion(of: UUID()) == .gone)
    }

    @Test func snapshotsAreSealedForTheirVersion() async throws {
        let server = try ProtocolServer()
        let a = replica(server, client: UUID())
        #expect(try a.latestSnapshot() == nil)
        let task = UUID(), version = UUID()
        try a.addSnapshot(version: version, tasks: [(task, [("description", "milk"), ("status", "pending")])])
        let snapshot = try #require(try a.latestSnapshot())
        #expect(snapshot.version == version)
        #expect(snapshot.tasks.count == 1 && snapshot.tasks[0].uuid == task && snapshot.tasks[0].properties.map(\.value) == ["milk", "pending"])
    }

    @Test func aWrongSecretOrADeadServerIsNamed() async throws {
        let server = try ProtocolServer()
        let client = UUID()
        let nilVersion = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        guard case .added(let v1, _) = try replica(server, client: client).addVersion(parent: nilVersion, operations: [.create(UUID())]) else {
            Issue.record("not added")
            return
        }
        let wrong = replica(server, client: client, key: PBKDF2.sha256(password: Array("wrong".utf8), salt: [], iterations: 1, length: 32))
        #expect(throws: SyncServerError.self) { try wrong.childVersion(of: nilVersion) }
        do {
            _ = try wrong.childVersion(of: nilVersion)
        } catch let error as SyncServerError {
            #expect(error == .cannotDecrypt(version: v1, reason: "\(SyncCryptor.Failure.authenticationFailed)"))
            #expect("\(error)".contains("wrong encryption secret"))
        }
        let dead = HTTPSyncServer(url: try #require(URL(string: "http://127.0.0.1:9/")), clientID: client, cryptor: SyncCryptor(key: Self.key), transport: URLSessionTransport())
        #expect(throws: SyncServerError.self) { try dead.childVersion(of: nilVersion) }
    }

    /// The in-process transport (what `SyncTransport.urlSession` sends with) against hostile
    /// servers, one after another on one transport (one URLSession): an endless answer is
    /// stopped at the size bound while the delegate is held up at its first chunk, one that
    /// never answers at the deadline, and the same transport then carries a sync server's
    /// requests: a request stopped on the transfer thread leaves the session usable.
    @Test func hostileServersLeaveTheInProcessTransportBoundedAndUsable() throws {
        var transport = URLSessionTransport(deadline: 3, answerLimit: 20_000_000)
        transport.firstChunkPause = 0.5
        for mode in ["endless", "silent", "huge", "endless"] {
            let hostile = try HostileServer(mode)
            let expected = ["endless": "the server's answer passed 20000000 bytes, the most a sync takes; the rest was not read",
                            "silent": "did not finish answering within 3 seconds (the deadline of one request, sync.timeout)",
                            "huge": "is 3221225472 bytes, more than the 20000000 a sync takes; it was not read"][mode] ?? "?"
            #expect(throws: HTTPTransportError.self, "\(mode)") {
                do {
                    _ = try transport.send(HTTPRequest(method: "GET", url: hostile.url + "v1/client/get-child-version/\(UUID())"))
                } catch {
                    #expect("\(error)".contains(expected), "\(mode): \(error)")
                    throw error
                }
            }
            withExtendedLifetime(hostile) {}
        }
        let server = try ProtocolServer()
        let replica = HTTPSyncServer(url: server.url, clientID: UUID(), cryptor: SyncCryptor(key: Self.key), transport: transport)
        let nilVersion = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        #expect(try replica.childVersion(of: nilVersion) == .upToDate)
        guard case .added = try replica.addVersion(parent: nilVersion, operations: [.create(UUID())]) else {
            Issue.record("not added after the hostile servers")
            return
        }
    }
}
