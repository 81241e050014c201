import Foundation
import ObjectStoreSync
import ObjectStoreSyncNetworking

// taskctl's network helper: reads requests (a JSON head line, then the body's bytes) from
// standard input, sends them with URLSession, and writes each answer (or the reason there is
// none) the same way; ends at the end of its input. taskctl starts it for a sync only, so the libraries
// HTTPS needs are loaded by this process, not by every taskctl command.
let transport = URLSessionTransport()
let reader = HTTPExchange.Reader(FileHandle.standardInput)

func reply(_ frame: Data?) {
    guard let frame else { exit(1) }
    FileHandle.standardOutput.write(frame)
}

/// The answer's frame, or the reason there is none (the sync module's wait for a call).
func answer(_ request: HTTPRequest) -> Data? {
    do {
        return try HTTPExchange.frame(try waitFor { try await transport.send(request) })
    } catch {
        return try? HTTPExchange.frame(error: "\(error)")
    }
}

while let line = reader.line() {
    guard let head = try? JSONDecoder().decode(HTTPExchange.RequestHead.self, from: line), head.length >= 0,
          let body = reader.bytes(head.length) else {
        reply(try? HTTPExchange.frame(error: "taskctl-http: a request that is not a head and its body"))
        exit(1)
    }
    reply(answer(HTTPRequest(method: head.method, url: head.url, headers: head.headers, body: head.length > 0 ? body : nil)))
}
