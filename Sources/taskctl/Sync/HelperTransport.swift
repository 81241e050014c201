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
    private let lock = NSLock()
    private var process: Process?
    private var requests: FileHandle?
    private var replies: FileHandle?
    private var pending = Data()

    init(helper: URL) {
        self.helper = helper
    }

    /// The helper beside this executable (through links to it), when it is there.
    static func locate() -> URL? {
        guard let executable = Bundle.main.executablePath ?? CommandLine.arguments.first else { return nil }
        let url = URL(fileURLWithPath: executable).resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("taskctl-http")
        return FileManager.default.isExecutableFile(atPath: url.path) ? url : nil
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try exchange(request)
    }

    private func exchange(_ request: HTTPRequest) throws -> HTTPResponse {
        lock.lock()
        defer { lock.unlock() }
        if process == nil { try start() }
        guard let requests, let replies else { throw HTTPTransportError(reason: "taskctl-http is not running") }
        do {
            try requests.write(contentsOf: try HTTPExchange.line(request))
        } catch {
            throw HTTPTransportError(reason: "taskctl-http stopped: \(error.localizedDescription)")
        }
        // Only the bytes read last are looked through for the line's end: a reply of
        // megabytes arrives in many reads.
        var end = pending.firstIndex(of: UInt8(ascii: "\n"))
        while end == nil {
            let chunk = replies.availableData
            guard !chunk.isEmpty else { throw HTTPTransportError(reason: "taskctl-http stopped without answering") }
            let searched = pending.endIndex
            pending.append(chunk)
            end = pending[searched...].firstIndex(of: UInt8(ascii: "\n"))
        }
        guard let end else { throw HTTPTransportError(reason: "taskctl-http answered nothing") }
        let line = Data(pending[pending.startIndex..<end])
        pending.removeSubrange(pending.startIndex...end)
        let reply: HTTPExchange.Reply
        do {
            reply = try JSONDecoder().decode(HTTPExchange.Reply.self, from: line)
        } catch {
            throw HTTPTransportError(reason: "taskctl-http answered what is not JSON")
        }
        guard let response = reply.response else { throw HTTPTransportError(reason: reply.error ?? "no answer") }
        return response
    }

    private func start() throws {
        // A helper that dies makes writes to it fail with EPIPE, not end taskctl.
        signal(SIGPIPE, SIG_IGN)
        let process = Process()
        process.executableURL = helper
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
        replies = output.fileHandleForReading
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
