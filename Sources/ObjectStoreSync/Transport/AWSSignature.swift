import Foundation
import ObjectStoreModel

/// An access key of AWS (or of an S3-compatible service), with the session token of
/// temporary credentials.
package struct AWSCredentials: Sendable, Equatable {
    package var accessKeyID: String
    package var secretAccessKey: String
    package var sessionToken: String?

    package init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }
}

/// AWS Signature Version 4, as S3 checks it: the request's method, path, query, headers and
/// the SHA-256 of its body, signed with a key derived from the secret access key, the day,
/// the region and the service.
package enum AWSSignatureV4 {
    /// Adds `x-amz-date`, `x-amz-content-sha256` (and `x-amz-security-token`) and the
    /// `Authorization` header to `request`. Every header the request carries is signed, so
    /// none may be changed on the way (the transport adds only unsigned ones).
    package static func sign(_ request: inout HTTPRequest, credentials: AWSCredentials, region: String, service: String = "s3", date: Date) throws {
        guard let components = URLComponents(string: request.url), let host = components.host else {
            throw HTTPTransportError(reason: "\(request.url) is not a URL")
        }
        let (day, time) = timestamp(date)
        var headers: [String: String] = [:]
        for (name, value) in request.headers { headers[name.lowercased()] = value }
        headers["host"] = components.port.map { "\(host):\($0)" } ?? host
        headers["x-amz-date"] = time
        headers["x-amz-content-sha256"] = hex(SHA256Block.hash(Array(request.body ?? Data())))
        if let token = credentials.sessionToken { headers["x-amz-security-token"] = token }

        let names = headers.keys.sorted()
        let signedHeaders = names.joined(separator: ";")
        var canonical = request.method + "\n"
        canonical += (components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath) + "\n"
        canonical += canonicalQuery(components.percentEncodedQuery) + "\n"
        for name in names { canonical += name + ":" + trimmed(headers[name] ?? "") + "\n" }
        canonical += "\n" + signedHeaders + "\n" + (headers["x-amz-content-sha256"] ?? "")

        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let stringToSign = "AWS4-HMAC-SHA256\n\(time)\n\(scope)\n" + hex(SHA256Block.hash(Array(canonical.utf8)))
        var key = Array("AWS4\(credentials.secretAccessKey)".utf8)
        for part in [day, region, service, "aws4_request"] { key = HMACSHA256.code(for: Array(part.utf8), key: key) }
        let signature = hex(HMACSHA256.code(for: Array(stringToSign.utf8), key: key))

        for name in ["x-amz-date", "x-amz-content-sha256", "x-amz-security-token"] {
            if let value = headers[name] { request.headers[name] = value }
        }
        request.headers["Authorization"] = "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(signedHeaders), Signature=\(signature)"
    }

    /// A path segment or query value encoded as SigV4 wants: every byte but the unreserved
    /// `A-Z a-z 0-9 - _ . ~` as `%XX`.
    package static func encode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0x0F, radix: 16, uppercase: true)
            }
        }
        return out
    }

    /// The query's parameters sorted by name (then value), each `name=value` as encoded
    /// in the URL (which ``encode(_:)`` made).
    static func canonicalQuery(_ query: String?) -> String {
        guard let query, !query.isEmpty else { return "" }
        let pairs = query.split(separator: "&").map { part -> (String, String) in
            let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(pieces[0]), pieces.count > 1 ? String(pieces[1]) : "")
        }
        return pairs.sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
    }

    /// A header value with its ends trimmed and inner runs of spaces made one.
    static func trimmed(_ value: String) -> String {
        value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
    }

    /// `yyyyMMdd` and `yyyyMMdd'T'HHmmss'Z'` in UTC.
    static func timestamp(_ date: Date) -> (day: String, time: String) {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let day = "\(parts.tm_year + 1900)" + two(parts.tm_mon + 1) + two(parts.tm_mday)
        return (day, day + "T" + two(parts.tm_hour) + two(parts.tm_min) + two(parts.tm_sec) + "Z")
    }

    static func hex(_ bytes: [UInt8]) -> String { DerivedKeyCache.hexText(bytes) }
}
