import Foundation

/// A bucket of Amazon S3 or of a service that speaks its API (MinIO, SeaweedFS, Garage,
/// Cloudflare R2, ...), over an ``HTTPTransport``, every request signed with AWS Signature
/// Version 4.
package struct S3Bucket: ObjectBucket {
    package let bucket: String
    package let region: String
    /// The service's URL; nil for AWS itself (`https://s3.REGION.amazonaws.com`).
    package let endpoint: URL?
    /// Whether the bucket is the first part of the path (`https://host/BUCKET/NAME`) rather
    /// than of the host name (`https://BUCKET.host/NAME`).
    package let pathStyle: Bool
    let credentials: AWSCredentials
    let transport: any HTTPTransport
    /// The time requests are signed with: the real clock (S3 refuses a request whose time is
    /// 15 minutes off).
    let clock: @Sendable () -> Date

    /// A bucket at AWS (no `endpoint`) or at the S3-compatible service at `endpoint`.
    /// Without `forcePathStyle` the bucket goes in the host name, as the AWS SDKs do, but for
    /// an endpoint that is an IP address or `localhost`, where it cannot.
    package init(bucket: String, region: String?, endpoint: URL?, forcePathStyle: Bool, credentials: AWSCredentials,
                 transport: any HTTPTransport, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.bucket = bucket
        self.region = region ?? "us-east-1"
        self.endpoint = endpoint
        let host = endpoint?.host ?? ""
        let isAddress = host == "localhost" || host.contains(":") || host.split(separator: ".").count == 4 && host.allSatisfy { $0.isNumber || $0 == "." }
        self.pathStyle = forcePathStyle || isAddress || bucket.contains(".")
        self.credentials = credentials
        self.transport = transport
        self.clock = clock
    }

    package var identity: String { "s3 \(endpoint?.absoluteString ?? "aws \(region)") bucket \(bucket)" }

    /// The URL of an object (or of the bucket, for `name` nil) with an encoded query.
    func url(_ name: String?, query: [(String, String)] = []) -> String {
        var base: String
        if let endpoint {
            let scheme = endpoint.scheme ?? "https"
            let port = endpoint.port.map { ":\($0)" } ?? ""
            let host = endpoint.host ?? ""
            let path = endpoint.path.hasSuffix("/") ? String(endpoint.path.dropLast()) : endpoint.path
            base = pathStyle ? "\(scheme)://\(host)\(port)\(path)/\(AWSSignatureV4.encode(bucket))" : "\(scheme)://\(bucket).\(host)\(port)\(path)"
        } else {
            base = pathStyle ? "https://s3.\(region).amazonaws.com/\(AWSSignatureV4.encode(bucket))" : "https://\(bucket).s3.\(region).amazonaws.com"
        }
        base += "/" + (name.map(AWSSignatureV4.encode) ?? "")
        if !query.isEmpty {
            base += "?" + query.map { "\(AWSSignatureV4.encode($0.0))=\(AWSSignatureV4.encode($0.1))" }.joined(separator: "&")
        }
        return base
    }

    func send(_ method: String, _ url: String, headers: [String: String] = [:], body: Data? = nil) throws -> HTTPResponse {
        var request = HTTPRequest(method: method, url: url, headers: headers, body: body)
        try AWSSignatureV4.sign(&request, credentials: credentials, region: region, date: clock())
        do {
            return try transport.send(request)
        } catch {
            throw SyncServerError.unreachable(url: url, reason: "\(error)")
        }
    }

    /// The error S3 answered, with its code and message (`AccessDenied: ...`).
    func failure(_ response: HTTPResponse, _ url: String) -> SyncServerError {
        let body = String(decoding: response.body, as: UTF8.self)
        let code = XMLText.first("Code", in: body)
        var reason = [code, XMLText.first("Message", in: body)].compactMap { $0 }.joined(separator: ": ")
        if reason.isEmpty { reason = HTTPSyncServer.excerpt(response.body) }
        switch code {
        case "SignatureDoesNotMatch", "InvalidAccessKeyId", "AccessDenied":
            reason += " (check the access key and the secret access key)"
        case "RequestTimeTooSkewed":
            reason += " (this machine's clock is off)"
        case "NoSuchBucket":
            reason += " (make the bucket '\(bucket)' first)"
        default: break
        }
        return .status(response.status, url: url, body: reason)
    }

    package func get(_ name: String) throws -> (data: Data, etag: String?)? {
        let url = url(name)
        let response = try send("GET", url)
        switch response.status {
        case 200...299: return (response.body, response.header("ETag"))
        case 404 where XMLText.first("Code", in: String(decoding: response.body, as: UTF8.self)) != "NoSuchBucket": return nil
        default: throw failure(response, url)
        }
    }

    package func put(_ name: String, _ data: Data, condition: PutCondition) throws -> Bool {
        let url = url(name)
        var headers = ["Content-Type": "application/octet-stream"]
        switch condition {
        case .always: break
        case .absent: headers["If-None-Match"] = "*"
        case .unchanged(let etag): headers["If-Match"] = etag
        }
        let response = try send("PUT", url, headers: headers, body: data)
        switch response.status {
        case 200...299: return true
        // The condition failed; a replaced object that vanished in between answers 404.
        case 412, 409: return false
        case 404 where condition != .always && XMLText.first("Code", in: String(decoding: response.body, as: UTF8.self)) == "NoSuchKey": return false
        default: throw failure(response, url)
        }
    }

    package func delete(_ name: String) throws {
        let url = url(name)
        let response = try send("DELETE", url)
        guard (200...299).contains(response.status) || response.status == 404 else { throw failure(response, url) }
    }

    package func list(prefix: String) throws -> [(name: String, modified: Date?)] {
        var objects: [(name: String, modified: Date?)] = []
        var token: String?
        repeat {
            var query = [("list-type", "2"), ("prefix", prefix)]
            if let token { query.append(("continuation-token", token)) }
            let url = url(nil, query: query)
            let response = try send("GET", url)
            guard (200...299).contains(response.status) else { throw failure(response, url) }
            let body = String(decoding: response.body, as: UTF8.self)
            for entry in XMLText.all("Contents", in: body) {
                guard let key = XMLText.first("Key", in: entry) else { continue }
                objects.append((key, XMLText.first("LastModified", in: entry).flatMap(XMLText.date)))
            }
            token = XMLText.first("IsTruncated", in: body) == "true" ? XMLText.first("NextContinuationToken", in: body) : nil
        } while token != nil
        return objects
    }
}

/// The little of XML that S3's answers need: the text of elements by name.
enum XMLText {
    /// The contents of every `<name>...</name>`, entities decoded.
    static func all(_ name: String, in xml: String) -> [String] {
        var found: [String] = []
        var rest = xml[...]
        while let open = rest.range(of: "<\(name)>"), let close = rest[open.upperBound...].range(of: "</\(name)>") {
            found.append(decode(rest[open.upperBound..<close.lowerBound]))
            rest = rest[close.upperBound...]
        }
        return found
    }

    static func first(_ name: String, in xml: String) -> String? {
        guard let open = xml.range(of: "<\(name)>"), let close = xml[open.upperBound...].range(of: "</\(name)>") else { return nil }
        return decode(xml[open.upperBound..<close.lowerBound])
    }

    static func decode(_ text: Substring) -> String {
        guard text.contains("&") else { return String(text) }
        return text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    /// An ISO 8601 time as S3 writes it (`2026-11-26T07:16:26.000Z`).
    static func date(_ text: String) -> Date? {
        let digits = text.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        guard digits.count >= 6 else { return nil }
        var parts = tm()
        parts.tm_year = Int32(digits[0] - 1900)
        parts.tm_mon = Int32(digits[1] - 1)
        parts.tm_mday = Int32(digits[2])
        parts.tm_hour = Int32(digits[3])
        parts.tm_min = Int32(digits[4])
        parts.tm_sec = Int32(digits[5])
        return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
    }
}
