import Foundation

/// A TaskChampion sync server (taskchampion-sync-server, or Taskwarrior's hosted ones)
/// over HTTP: versions and snapshots, sealed with the client's key (the salt is the client
/// ID's 16 bytes; a version is sealed for its parent's UUID, a snapshot for its version's).
package struct HTTPSyncServer: Sendable {
    static let historySegmentType = "application/vnd.taskchampion.history-segment"
    static let snapshotType = "application/vnd.taskchampion.snapshot"

    package let baseURL: URL
    package let clientID: UUID
    let cryptor: SyncCryptor
    let transport: any HTTPTransport

    /// A server at `url` for a client; `cryptor` holds the key of the encryption secret and
    /// the client ID (``salt(of:)``); `transport` sends the requests.
    package init(url: URL, clientID: UUID, cryptor: SyncCryptor, transport: any HTTPTransport) {
        self.baseURL = Self.directory(url)
        self.clientID = clientID
        self.cryptor = cryptor
        self.transport = transport
    }

    /// The URL as a folder (ending in `/`), which the protocol's paths follow.
    static func directory(_ url: URL) -> URL {
        url.absoluteString.hasSuffix("/") ? url : url.appendingPathComponent("")
    }

    /// The salt of the HTTP server's key derivation: the client ID's bytes.
    package static func salt(of clientID: UUID) -> [UInt8] {
        let u = clientID.uuid
        return [u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15]
    }

    /// Sends a version after `parent` (the nil UUID for the first).
    package func addVersion(parent: UUID, operations: [SyncOperation]) throws -> AddVersionResult {
        let body = cryptor.seal(SyncVersion.encode(operations), version: parent)
        let (data, response, url) = try send("v1/client/add-version/\(Self.text(parent))", method: "POST", body: body, type: Self.historySegmentType)
        switch response.status {
        case 409:
            return .conflict(expectedParent: try uuidHeader("X-Parent-Version-Id", response, url))
        case 200...299:
            let urgency: SnapshotUrgency
            switch response.header("X-Snapshot-Request") {
            case "urgency=low": urgency = .low
            case "urgency=high": urgency = .high
            default: urgency = .none
            }
            return .added(try uuidHeader("X-Version-Id", response, url), snapshot: urgency)
        default:
            throw SyncServerError.status(response.status, url: url, body: Self.excerpt(data))
        }
    }

    /// The version after `parent`.
    package func childVersion(of parent: UUID) throws -> ChildVersion {
        let (data, response, url) = try send("v1/client/get-child-version/\(Self.text(parent))", method: "GET")
        switch response.status {
        case 404: return .upToDate
        case 410: return .gone
        case 200...299:
            let parentID = try uuidHeader("X-Parent-Version-Id", response, url)
            let id = try uuidHeader("X-Version-Id", response, url)
            let operations = try open(data, response, url, type: Self.historySegmentType, sealedFor: parentID, naming: id, SyncVersion.decode)
            return .version(id: id, parent: parentID, operations: operations)
        default:
            throw SyncServerError.status(response.status, url: url, body: Self.excerpt(data))
        }
    }

    /// Sends a snapshot of every task as of `version`.
    package func addSnapshot(version: UUID, tasks: [(uuid: UUID, properties: [(key: String, value: String)])]) throws {
        let body = cryptor.seal(SyncSnapshot.encode(tasks), version: version)
        let (data, response, url) = try send("v1/client/add-snapshot/\(Self.text(version))", method: "POST", body: body, type: Self.snapshotType)
        guard (200...299).contains(response.status) else { throw SyncServerError.status(response.status, url: url, body: Self.excerpt(data)) }
    }

    /// The server's latest snapshot and its version, or nil when it has none.
    package func latestSnapshot() throws -> (version: UUID, tasks: [(uuid: UUID, properties: [(key: String, value: String)])])? {
        let (data, response, url) = try send("v1/client/snapshot", method: "GET")
        switch response.status {
        case 404: return nil
        case 200...299:
            let version = try uuidHeader("X-Version-Id", response, url)
            return (version, try open(data, response, url, type: Self.snapshotType, sealedFor: version, naming: version, SyncSnapshot.decode))
        default:
            throw SyncServerError.status(response.status, url: url, body: Self.excerpt(data))
        }
    }

    /// A blob's content after checking its type, unsealing it for `version` and decoding it;
    /// errors name the version (`id`) it belongs to.
    private func open<T>(_ data: Data, _ response: HTTPResponse, _ url: String, type: String, sealedFor version: UUID, naming id: UUID,
                         _ decode: ([UInt8]) throws -> T) throws -> T {
        guard response.header("Content-Type") == type else {
            throw SyncServerError.badResponse(url: url, reason: "the Content-Type of \(Self.text(id)) is not \(type)")
        }
        return try cryptor.open(Array(data), version: version, naming: id, blob: Self.text(id), server: url, decode)
    }

    private func send(_ path: String, method: String, body: [UInt8]? = nil, type: String? = nil) throws -> (Data, HTTPResponse, String) {
        guard let url = URL(string: path, relativeTo: baseURL)?.absoluteURL else {
            throw SyncServerError.badResponse(url: baseURL.absoluteString, reason: "cannot make a URL of \(path)")
        }
        var headers = ["X-Client-Id": Self.text(clientID)]
        if let type { headers["Content-Type"] = type }
        let response: HTTPResponse
        do {
            response = try transport.send(HTTPRequest(method: method, url: url.absoluteString, headers: headers, body: body.map { Data($0) }))
        } catch {
            throw SyncServerError.unreachable(url: url.absoluteString, reason: "\(error)")
        }
        return (response.body, response, url.absoluteString)
    }

    private func uuidHeader(_ name: String, _ response: HTTPResponse, _ url: String) throws -> UUID {
        guard let text = response.header(name), let uuid = UUID(uuidString: text) else {
            throw SyncServerError.badResponse(url: url, reason: "no UUID in its \(name) header")
        }
        return uuid
    }

    static func text(_ uuid: UUID) -> String { uuid.uuidString.lowercased() }

    static func excerpt(_ data: Data) -> String {
        String(decoding: data.prefix(200), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

extension HTTPSyncServer: SyncServer {
    package var identity: String { Self.identity(url: baseURL, clientID: clientID) }

    /// What names a server and client in the sync state (before the server is made).
    package static func identity(url: URL, clientID: UUID) -> String {
        "\(directory(url).absoluteString) client \(text(clientID))"
    }
}
