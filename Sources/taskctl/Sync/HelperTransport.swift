import Foundation
import ObjectStoreSync
#if canImport(Glibc)
import Glibc
#endif

/// Sends a sync's requests through `taskctl-http`, the helper beside taskctl's executable,
/// started at the first request and ended with the sync: Foundation's networking and the
/// libraries under it (libcurl, TLS) take milliseconds to load, which every other command
/// would pay if taskctl linked them.
final class HelperTransport: HTTPTransport, @unchecked Sendable {
    let helper: URL
    /// The most seconds one request may take (`sync.timeout`); the helper's default when nil.
    let timeout: Double?
    private let lock = NSLock()
    private var process: Process?
    private var requests: FileHandle?
    private var replies: HTTPExchange.Reader?

    init(helper: URL, timeout: Double? = nil) {
        self.helper = helper
        self.timeout = timeout
    }

    /// The helper beside this executable (through links to it), when it is there.
    static func locate() -> URL? {
        guard let executable = Bundle.main.executablePath ?? CommandLine.arguments.first else { return nil }
        let url = URL(fileURLWithPath: executable).resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("taskctl-http")
        return FileManager.default.isExecutableFile(atPath: url.path) ? url : nil
    }

    func send(_ request: HTTPRequest) throws -> HTTPResponse {
        try exchange(request)
    }

    private func exchange(_ request: HTTPRequest) throws -> HTTPResponse {
        lock.lock()
        defer { lock.unlock() }
        if process == nil { try start() }
        guard let requests, let replies else { throw HTTPTransportError(reason: "taskctl-http is not running") }
        do {
            try requests.write(contentsOf: try HTTPExchange.frame(request, timeout: timeout))
        } catch {
            throw HTTPTransportError(reason: "taskctl-http stopped: \(error.localizedDescription)")
        }
        guard let line = replies.line() else { throw HTTPTransportError(reason: "taskctl-http stopped without answering") }
        guard let head = try? JSONDecoder().decode(HTTPExchange.ReplyHead.self, from: line), head.length >= 0, head.length <= SyncLimits.answerBytes else {
            throw HTTPTransportError(reason: "taskctl-http answered what is not a reply")
        }
        guard let body = replies.bytes(head.length) else { throw HTTPTransportError(reason: "taskctl-http stopped in the middle of an answer") }
        guard let status = head.status else { throw HTTPTransportError(reason: head.error ?? "no answer") }
        return HTTPResponse(status: status, headers: head.headers ?? [:], body: body)
    }

    private func start() throws {
        // A helper that dies makes writes to it fail with EPIPE, not end taskctl.
        signal(SIGPIPE, SIG_IGN)
        let process = Process()
        process.executableURL = helper
        // Who its parent is, so a helper whose taskctl was killed before it started looking
        // (its parent already someone else) ends too.
        var environment = ProcessInfo.processInfo.environment
        environment["TASKCTL_HTTP_PARENT"] = String(getpid())
        process.environment = environment
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw HTTPTransportError(reason: "cannot start \(helper.path): \(error.localizedDescription)")
        }
        self.process = process
        requests = input.fileHandleForWriting
        replies = HTTPExchange.Reader(output.fileHandleForReading)
    }

    /// Ends the helper (its input closes; it exits).
    func finish() {
        lock.lock()
        defer { lock.unlock() }
        try? requests?.close()
        process?.waitUntilExit()
        process = nil
        requests = nil
        replies = nil
    }
}
