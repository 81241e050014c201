import Foundation
import ObjectStoreSync
import ObjectStoreSyncNetworking

// taskctl's network helper: reads requests, one JSON line each, from standard input, sends
// them with URLSession, and writes each answer (or the reason there is none) as one JSON
// line; ends at the end of its input. taskctl starts it for a sync only, so the libraries
// HTTPS needs are loaded by this process, not by every taskctl command.
let transport = URLSessionTransport()
let input = FileHandle.standardInput
var pending = Data()

func reply(_ reply: HTTPExchange.Reply) {
    guard let line = try? HTTPExchange.line(reply) else { exit(1) }
    FileHandle.standardOutput.write(line)
}

func answer(_ request: HTTPRequest) -> HTTPExchange.Reply {
    let result = ReplyBox()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do {
            result.set(HTTPExchange.Reply(response: try await transport.send(request), error: nil))
        } catch {
            result.set(HTTPExchange.Reply(response: nil, error: "\(error)"))
        }
        done.signal()
    }
    done.wait()
    return result.get()
}

final class ReplyBox: @unchecked Sendable {
    private let lock = NSLock()
    private var value = HTTPExchange.Reply(response: nil, error: "no answer")
    func set(_ reply: HTTPExchange.Reply) { lock.withLock { value = reply } }
    func get() -> HTTPExchange.Reply { lock.withLock { value } }
}

while true {
    let chunk = input.availableData
    if chunk.isEmpty { break }
    // Only the new bytes are looked through for a line's end: a request of megabytes
    // arrives in many reads.
    let searched = pending.endIndex
    pending.append(chunk)
    var from = searched
    while let end = pending[from...].firstIndex(of: UInt8(ascii: "\n")) {
        let line = pending[pending.startIndex..<end]
        pending.removeSubrange(pending.startIndex...end)
        from = pending.startIndex
        guard let request = try? JSONDecoder().decode(HTTPRequest.self, from: Data(line)) else {
            reply(HTTPExchange.Reply(response: nil, error: "taskctl-http: a request line that is not JSON"))
            continue
        }
        reply(answer(request))
    }
}
