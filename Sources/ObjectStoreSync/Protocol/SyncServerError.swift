import Foundation

/// A sync that failed, naming the cause.
public enum SyncServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server could not be reached.
    case unreachable(url: String, reason: String)
    /// The server answered with an unexpected status.
    case status(Int, url: String, body: String)
    /// The server's answer is not what the protocol says.
    case badResponse(url: String, reason: String)
    /// Data of a version (or snapshot) does not open: a wrong encryption secret, or data
    /// changed on the server.
    case cannotDecrypt(version: UUID, reason: String)
    /// The server was reached, but a step of the sync failed on this side (a git commit in
    /// the local clone, say): the reason names it.
    case failed(url: String, reason: String)

    /// What happened, naming the server (without credentials a URL may carry).
    public var description: String { Redaction.userinfo(in: text) }

    private var text: String {
        switch self {
        case .unreachable(let url, let reason): return "cannot reach the sync server at \(url): \(reason)"
        case .status(let code, let url, let body): return "the sync server answered \(code) to \(url)" + (body.isEmpty ? "" : ": \(body)")
        case .badResponse(let url, let reason): return "the sync server's answer to \(url) is not TaskChampion's protocol: \(reason)"
        case .cannotDecrypt(let version, let reason): return "version \(version.uuidString.lowercased()) does not decrypt: \(reason)"
        case .failed(let url, let reason): return "the sync with \(url) failed: \(reason)"
        }
    }
}
