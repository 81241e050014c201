import Foundation
import Testing
import ObjectStore
import ObjectStoreModel
import ObjectStoreSync

// The server of these tests is MemorySyncServer (Tests/Support), written with the public
// API alone, as this file is (nothing @testable).

@Suite struct CustomServerTests {
    /// Two replicas meet at a server of the test's own, given with `SyncRemote.custom`: a
    /// note made on one reaches the other, an edit there comes back, and the server saw
    /// every operation the reports say were sent.
    @Test func aServerOfYourOwnCarriesTheChain() throws {
        let model = try ManagedObjectModel(schema: CustomSyncMappingTests.schema, file: "notes")
        let server = MemorySyncServer()
        let remote = SyncRemote.custom(identity: server.identity) { server }
        func replica() throws -> (ManagedObjectContext, SyncEngine) {
            let coordinator = PersistentStoreCoordinator(inMemoryWith: model, history: .all)
            return (ManagedObjectContext(coordinator: coordinator), try SyncEngine(coordinator: coordinator, remote: remote))
        }
        let (a, engineA) = try replica(), (b, engineB) = try replica()
        let note = try a.insertObject(entityName: "Note")
        let uuid = UUID()
        try note.setValue(.uuid(uuid), forKey: "uuid")
        try note.setValue("Buy milk", forKey: "text")
        try a.save()
        let first = try engineA.sync()
        #expect(first.operationsSent > 0)
        _ = try engineB.sync()
        let received = try #require(try b.fetch(FetchRequest(entityName: "Note")).first)
        #expect(received["uuid"] == .uuid(uuid) && received["text"] == "Buy milk")
        try received.setValue("Buy oat milk", forKey: "text")
        try b.save()
        let second = try engineB.sync()
        _ = try engineA.sync()
        a.refreshAllObjects()
        #expect(note["text"] == "Buy oat milk")
        #expect(server.operationsReceived == first.operationsSent + second.operationsSent)
    }

    /// A server that cannot be opened fails the sync with its error, and the store is as it was.
    @Test func aServerThatCannotOpenFailsTheSync() throws {
        let model = try ManagedObjectModel(schema: CustomSyncMappingTests.schema, file: "notes")
        let coordinator = PersistentStoreCoordinator(inMemoryWith: model, history: .all)
        let remote = SyncRemote.custom(identity: "nowhere") { throw HTTPTransportError(reason: "no such place") }
        let engine = try SyncEngine(coordinator: coordinator, remote: remote)
        #expect(throws: HTTPTransportError(reason: "no such place")) { try engine.sync() }
        #expect(try engine.status().server == nil)
    }
}
