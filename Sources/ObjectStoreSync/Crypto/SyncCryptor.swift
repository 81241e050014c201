import Foundation
import ObjectStoreModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// TaskChampion's encryption of versions and snapshots: a key derived from the secret
/// and a salt (PBKDF2-HMAC-SHA256, 600,000 iterations, 32 bytes), and per blob an
/// envelope `0x01 | nonce (12) | ciphertext | tag (16)` sealed with ChaCha20-Poly1305 over
/// the additional data `0x01 | version UUID (16)` (the parent version's for the HTTP
/// server, the version's own for buckets and git, the snapshot's version for snapshots).
package struct SyncCryptor: Sendable {
    /// PBKDF2's iterations.
    package static let iterations = 600_000
    static let envelopeVersion: UInt8 = 1
    static let applicationID: UInt8 = 1

    /// The 32-byte key.
    package let key: [UInt8]

    /// A blob that does not open, and why.
    package enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// Shorter than an envelope.
        case tooShort
        /// An envelope of another version than 1.
        case unknownEnvelope(UInt8)
        /// The tag does not match: another secret or salt, another version UUID, or data
        /// changed on the way.
        case authenticationFailed

        package var description: String {
            switch self {
            case .tooShort: return "the encrypted data is too short to be an envelope"
            case .unknownEnvelope(let version): return "the encrypted data is in envelope version \(version), not 1"
            case .authenticationFailed: return "the encrypted data does not open: a wrong encryption secret, or data changed on the server"
            }
        }
    }

    /// The key of a secret and salt (slow: 600,000 rounds; see ``DerivedKeyCache``).
    /// `iterations` is for tests of what does not depend on the protocol's count.
    package init(secret: [UInt8], salt: [UInt8], iterations: Int = SyncCryptor.iterations) {
        key = PBKDF2.sha256(password: secret, salt: salt, iterations: iterations, length: 32)
    }

    /// A key derived before.
    package init(key: [UInt8]) {
        precondition(key.count == 32, "a ChaCha20-Poly1305 key has 32 bytes")
        self.key = key
    }

    static func additionalData(_ version: UUID) -> [UInt8] {
        let u = version.uuid
        return [applicationID, u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15]
    }

    /// The envelope of `payload` for a version; a random nonce unless one is given.
    package func seal(_ payload: [UInt8], version: UUID, nonce: [UInt8]? = nil) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        let nonce = nonce ?? (0..<12).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let (ciphertext, tag) = ChaCha20Poly1305.seal(payload, key: key, nonce: nonce, authenticating: Self.additionalData(version))
        return [Self.envelopeVersion] + nonce + ciphertext + tag
    }

    /// The payload of an envelope sealed for a version.
    ///
    /// - Throws: ``Failure``.
    package func unseal(_ envelope: [UInt8], version: UUID) throws -> [UInt8] {
        guard envelope.count >= 1 + 12 + 16 else { throw Failure.tooShort }
        guard envelope[0] == Self.envelopeVersion else { throw Failure.unknownEnvelope(envelope[0]) }
        let nonce = Array(envelope[1..<13])
        let ciphertext = Array(envelope[13..<envelope.count - 16]), tag = Array(envelope.suffix(16))
        do {
            return try ChaCha20Poly1305.open(ciphertext, tag: tag, key: key, nonce: nonce, authenticating: Self.additionalData(version))
        } catch {
            throw Failure.authenticationFailed
        }
    }

    /// A sealed blob opened: unsealed for `version` and decoded. One that does not open is
    /// ``SyncServerError/cannotDecrypt(version:reason:)`` naming `id` (a wrong secret, or
    /// data changed on the server); one that does not decode is a bad answer of `server`
    /// naming `blob`.
    package func open<T>(_ sealed: [UInt8], version: UUID, naming id: UUID, blob: String, server: String, _ decode: ([UInt8]) throws -> T) throws -> T {
        let plaintext: [UInt8]
        do {
            plaintext = try unseal(sealed, version: version)
        } catch {
            throw SyncServerError.cannotDecrypt(version: id, reason: "\(error)")
        }
        do {
            return try decode(plaintext)
        } catch {
            throw SyncServerError.badResponse(url: server, reason: "\(blob): \(error)")
        }
    }
}

/// The derived key kept in a file of its own (mode 0600), so a sync does not spend the
/// key derivation's 600,000 rounds each time. The file holds the iteration count, the
/// salt, a fingerprint of the secret and the key; a file for another secret or salt is derived again and
/// replaced. The file is as secret as the encryption secret itself.
package enum DerivedKeyCache {
    /// The key for a secret and salt, read from `url` when it was derived for them, else
    /// derived and written there (a file that cannot be written is only a lost shortcut).
    package static func key(secret: [UInt8], salt: [UInt8], at url: URL, iterations: Int = SyncCryptor.iterations) -> [UInt8] {
        let fingerprint = HMACSHA256.code(for: salt + Array("objectstore key cache".utf8), key: secret)
        let expected = "1 \(iterations) \(hexText(salt)) \(hexText(fingerprint)) "
        if let text = read(url), text.hasPrefix(expected), let key = bytes(hex: String(text.dropFirst(expected.count)).trimmingCharacters(in: .whitespacesAndNewlines)), key.count == 32 {
            return key
        }
        let key = SyncCryptor(secret: secret, salt: salt, iterations: iterations).key
        write(expected + hexText(key) + "\n", to: url)
        return key
    }

    /// The file's text, when it is a regular file of this user's that only they can read
    /// (never through a symbolic link).
    static func read(_ url: URL) -> String? {
        let fd = open(url.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == getuid(), info.st_mode & 0o077 == 0, info.st_size < 4096 else { return nil }
        var buffer = [UInt8](repeating: 0, count: Int(info.st_size))
        let count = buffer.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress, $0.count) }
        guard count == buffer.count else { return nil }
        return String(decoding: buffer, as: UTF8.self)
    }

    /// Writes the file whole under a temporary name (0600) and renames it into place.
    static func write(_ text: String, to url: URL) {
        let temporary = url.path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { systemWrite(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == bytes.count, synced, rename(temporary, url.path) == 0 else {
            unlink(temporary)
            return
        }
    }

    private static func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        #if canImport(Darwin)
        return Darwin.read(fd, buffer, count)
        #else
        return Glibc.read(fd, buffer, count)
        #endif
    }

    private static func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
        #if canImport(Darwin)
        return Darwin.write(fd, buffer, count)
        #else
        return Glibc.write(fd, buffer, count)
        #endif
    }

    static func hexText(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes { out += [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]] }
        return String(decoding: out, as: UTF8.self)
    }

    static func bytes(hex: String) -> [UInt8]? {
        let utf8 = Array(hex.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            default: return nil
            }
        }
        var out: [UInt8] = []
        for i in stride(from: 0, to: utf8.count, by: 2) {
            guard let high = nibble(utf8[i]), let low = nibble(utf8[i + 1]) else { return nil }
            out.append(high << 4 | low)
        }
        return out
    }
}
