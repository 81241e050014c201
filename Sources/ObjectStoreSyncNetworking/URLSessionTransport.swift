import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ObjectStoreSync

/// HTTP through Foundation's URLSession (TLS included), in the calling process.
package struct URLSessionTransport: HTTPTransport {
    let session: URLSession

    /// A session that keeps nothing: no cookies, and no response cache (Foundation's
    /// would make a folder in the user's cache directory).
    package init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration)
    }

    package func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard let url = URL(string: request.url) else { throw HTTPTransportError(reason: "\(request.url) is not a URL") }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        let data: Data, response: URLResponse
        do {
            (data, response) = try await session.data(for: urlRequest)
        } catch {
            throw HTTPTransportError(reason: error.localizedDescription)
        }
        guard let http = response as? HTTPURLResponse else { throw HTTPTransportError(reason: "not an HTTP response") }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        return HTTPResponse(status: http.statusCode, headers: headers, body: data)
    }
}

extension SyncTransport {
    /// Requests sent with Foundation's URLSession (HTTPS included), in this process, with an
    /// ephemeral session: no cookies, no cache.
    public static var urlSession: SyncTransport { SyncTransport(URLSessionTransport()) }
}
