import Foundation

/// One HTTP request of a sync.
public struct HTTPRequest: Sendable, Codable, Equatable {
    /// `GET`, `PUT`, `POST` or `DELETE`.
    public var method: String
    /// The absolute URL.
    public var url: String
    /// The headers to send.
    public var headers: [String: String]
    /// The body, if any.
    public var body: Data?

    /// A request of `method` to `url`.
    public init(method: String, url: String, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// Its answer; header names in lower case.
public struct HTTPResponse: Sendable, Codable, Equatable {
    /// The HTTP status code.
    public var status: Int
    /// The headers, their names in lower case.
    public var headers: [String: String]
    /// The body.
    public var body: Data

    /// An answer of `status` (header names are lower-cased).
    public init(status: Int, headers: [String: String], body: Data) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        self.body = body
    }

    /// The value of the header `name`, whatever its case.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// Sends HTTP requests, synchronously: the calling thread waits for the answer. The sync
/// module itself does no networking, so a program that links it (taskctl) does not load
/// Foundation's networking and libcurl at every start: `SyncTransport.urlSession`
/// (ObjectStoreSyncNetworking) sends them in process, and taskctl hands them to its helper,
/// `taskctl-http`, which runs only while a sync does. Give your own with
/// ``SyncTransport/init(_:)``.
public protocol HTTPTransport: Sendable {
    /// The answer, or a thrown ``HTTPTransportError`` when there is none.
    func send(_ request: HTTPRequest) throws -> HTTPResponse
}

/// No answer came: the server could not be reached (or the helper failed).
public struct HTTPTransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Why, in a sentence.
    public var reason: String

    /// An error saying `reason`.
    public init(reason: String) {
        self.reason = reason
    }

    /// The reason.
    public var description: String { reason }
}

/// Requests and answers between taskctl and its helper: a head, one JSON line, then the
/// body's bytes as they are (base64 in JSON made a megabyte version cost more to pass than
/// to seal).
package enum HTTPExchange {
    package struct RequestHead: Codable, Sendable {
        package var method: String
        package var url: String
        package var headers: [String: String]
        package var length: Int
        /// The most seconds the request may take, answer included (the helper's default
        /// when absent).
        package var timeout: Double?
    }

    /// An answer's head, or the reason there is none.
    package struct ReplyHead: Codable, Sendable {
        package var status: Int?
        package var headers: [String: String]?
        package var length: Int
        package var error: String?
    }

    package static func frame(_ request: HTTPRequest, timeout: Double? = nil) throws -> Data {
        var data = try JSONEncoder().encode(RequestHead(method: request.method, url: request.url, headers: request.headers, length: request.body?.count ?? 0, timeout: timeout))
        data.append(UInt8(ascii: "\n"))
        if let body = request.body { data.append(body) }
        return data
    }

    package static func frame(_ response: HTTPResponse) throws -> Data {
        var data = try JSONEncoder().encode(ReplyHead(status: response.status, headers: response.headers, length: response.body.count, error: nil))
        data.append(UInt8(ascii: "\n"))
        data.append(response.body)
        return data
    }

    package static func frame(error: String) throws -> Data {
        var data = try JSONEncoder().encode(ReplyHead(status: nil, headers: nil, length: 0, error: error))
        data.append(UInt8(ascii: "\n"))
        return data
    }

    /// Reads heads and bodies from a pipe: what one read brought beyond a frame is kept for
    /// the next.
    package final class Reader {
        let handle: FileHandle
        var buffer = Data()

        package init(_ handle: FileHandle) {
            self.handle = handle
        }

        /// The next line (without its newline), nil at the end of the input.
        package func line() -> Data? {
            var searched = buffer.startIndex
            while true {
                if let end = buffer[searched...].firstIndex(of: UInt8(ascii: "\n")) {
                    let line = Data(buffer[buffer.startIndex..<end])
                    buffer = Data(buffer[(end + 1)...])
                    return line
                }
                searched = buffer.endIndex
                let chunk = handle.availableData
                if chunk.isEmpty { return nil }
                buffer.append(chunk)
            }
        }

        /// The next `count` bytes, nil when the input ends before them.
        package func bytes(_ count: Int) -> Data? {
            while buffer.count < count {
                let chunk = handle.availableData
                if chunk.isEmpty { return nil }
                buffer.append(chunk)
            }
            let body = Data(buffer.prefix(count))
            buffer = Data(buffer.dropFirst(count))
            return body
        }
    }
}
