import Foundation

/// Credentials written into a URL (`https://user:password@host`, a git remote
/// `https://user:TOKEN@host/r.git`) are never shown: every message that may name a server
/// passes through here, which replaces the user information of each URL in the text.
package enum Redaction {
    /// `text` with the `user:password@` part of every `scheme://` URL in it replaced by `***@`.
    package static func userinfo(in text: String) -> String {
        guard text.contains("@"), text.contains("://") else { return text }
        var result = ""
        var rest = Substring(text)
        while let marker = rest.range(of: "://") {
            result += rest[..<marker.upperBound]
            rest = rest[marker.upperBound...]
            // The authority ends at the first '/', '?', '#' or white space; its user
            // information at its last '@'.
            let authorityEnd = rest.firstIndex { "/?#".contains($0) || $0.isWhitespace || $0 == "\"" || $0 == "'" } ?? rest.endIndex
            if let at = rest[..<authorityEnd].lastIndex(of: "@") {
                result += "***@"
                rest = rest[rest.index(after: at)...]
            }
        }
        return result + rest
    }
}
