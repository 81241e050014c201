import Foundation
#if canImport(Glibc)
import Glibc
#endif
import ObjectStoreSync
import ObjectStoreSyncNetworking

// taskctl's network helper: reads requests (a JSON head line, then the body's bytes) from
// standard input, sends them with URLSession, and writes each answer (or the reason there is
// none) the same way; ends at the end of its input. taskctl starts it for a sync only, so the libraries
// HTTPS needs are loaded by this process, not by every taskctl command.
// Ends with taskctl: a request a server holds must not keep the helper running (and
// waiting on its socket) after the sync that asked for it was stopped or killed. Its
// parent is looked at once a second (prctl's death signal is not reachable from Swift).
// `_exit`, not `exit`: exit's handlers (libcurl's global cleanup among them) can wait on
// the request this process is stuck in, and a loaded CI machine saw the helper outlive
// its killed taskctl by more than 10 s.
// The parent is the taskctl that named itself (TASKCTL_HTTP_PARENT): one killed before this
// line ran has left another parent already, which getppid() alone would take for it.
let parent = ProcessInfo.processInfo.environment["TASKCTL_HTTP_PARENT"].flatMap { Int32($0) } ?? getppid()
if getppid() != parent { _exit(1) }
Thread.detachNewThread {
    while true {
        sleep(1)
        if getppid() != parent { _exit(1) }
    }
}
let reader = HTTPExchange.Reader(FileHandle.standardInput)

func reply(_ frame: Data?) {
    guard let frame else { exit(1) }
    FileHandle.standardOutput.write(frame)
}

/// The answer's frame, or the reason there is none (the sync module's wait for a call).
func answer(_ request: HTTPRequest, timeout: Double?) -> Data? {
    var limit = SyncLimits.answerBytes
    #if DEBUG
    // The tests' smaller bound, so an endless answer is stopped after megabytes, not a GiB.
    if let text = ProcessInfo.processInfo.environment["TASKCTL_HTTP_ANSWER_LIMIT"], let value = Int(text), value > 0 { limit = value }
    #endif
    var transport = URLSessionTransport(deadline: timeout ?? 300, answerLimit: limit)
    #if DEBUG
    // The tests' stand-in for a busy machine: the delegate's thread held up at the first chunk.
    if let text = ProcessInfo.processInfo.environment["TASKCTL_HTTP_FIRST_CHUNK_PAUSE"], let value = Double(text), value > 0 { transport.firstChunkPause = value }
    #endif
    #if DEBUG && os(Linux)
    defer { reportPeakMemory() }
    #endif
    do {
        return try HTTPExchange.frame(try transport.send(request))
    } catch {
        return try? HTTPExchange.frame(error: "\(error)")
    }
}

#if DEBUG && os(Linux)
/// For the tests: the most memory this process has held so far (its peak resident set, in
/// KiB), written to TASKCTL_HTTP_PEAK_FILE after each answer.
func reportPeakMemory() {
    guard let path = ProcessInfo.processInfo.environment["TASKCTL_HTTP_PEAK_FILE"] else { return }
    var usage = rusage()
    guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return }
    try? "\(usage.ru_maxrss)\n".write(toFile: path, atomically: true, encoding: .utf8)
}
#endif

while let line = reader.line() {
    guard let head = try? JSONDecoder().decode(HTTPExchange.RequestHead.self, from: line), head.length >= 0,
          let body = reader.bytes(head.length) else {
        reply(try? HTTPExchange.frame(error: "taskctl-http: a request that is not a head and its body"))
        exit(1)
    }
    let timeout = head.timeout.flatMap { $0.isFinite && $0 > 0 ? $0 : nil }
    reply(answer(HTTPRequest(method: head.method, url: head.url, headers: head.headers, body: head.length > 0 ? body : nil), timeout: timeout))
}
