import Foundation

/// One HTTP request of a sync.
package struct HTTPRequest: Sendable, Codable, Equatable {
    package var method: String
    package var url: String
    package var headers: [String: String]
    package var body: Data?

    package init(method: String, url: String, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// Its answer; header names in lower case.
package struct HTTPResponse: Sendable, Codable, Equatable {
    package var status: Int
    package var headers: [String: String]
    package var body: Data

    package init(status: Int, headers: [String: String], body: Data) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        self.body = body
    }

    package func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// Sends HTTP requests. The sync module itself does no networking, so a program that links
/// it (taskctl) does not load Foundation's networking and libcurl at every start:
/// `URLSessionTransport` (ObjectStoreSyncNetworking) sends them in process, and taskctl
/// hands them to its helper, `taskctl-http`, which runs only while a sync does.
package protocol HTTPTransport: Sendable {
    /// The answer, or a thrown ``HTTPTransportError`` when there is none.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}

/// No answer came: the server could not be reached (or the helper failed).
package struct HTTPTransportError: Error, Sendable, Equatable, CustomStringConvertible {
    package var reason: String

    package init(reason: String) {
        self.reason = reason
    }

    package var description: String { reason }
}

/// Requests and answers as one JSON line each, between taskctl and its helper.
package enum HTTPExchange {
    /// A line that is an answer or the reason there is none.
    package struct Reply: Codable, Sendable {
        package var response: HTTPResponse?
        package var error: String?

        package init(response: HTTPResponse?, error: String?) {
            self.response = response
            self.error = error
        }
    }

    package static func line<T: Encodable>(_ value: T) throws -> Data {
        var data = try JSONEncoder().encode(value)
        data.append(UInt8(ascii: "\n"))
        return data
    }
}
