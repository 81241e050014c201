import Foundation
import Testing
@testable import ObjectStoreSync

@Suite struct SyncCryptorTests {
    static let secret = Array("b4a4e6b7b811eda1dc1a2693ded".utf8)
    static let clientID = UUID(uuidString: "0666d464-418a-4a08-ad53-6f15c78270cd")!
    static let version = UUID(uuidString: "b0517957-f912-4d49-8330-f612e73030c4")!

    static var salt: [UInt8] {
        let u = clientID.uuid
        return [u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15]
    }

    /// The envelope as TaskChampion's protocol describes it, sealed and opened both ways
    /// with a second implementation (Python's `cryptography` and `hashlib`): the key, the
    /// envelope's bytes, the additional data.
    @Test(.enabled(if: PythonCheck.cryptography, PythonCheck.skipReason))
    func envelopesAgreeWithASecondImplementation() throws {
        let cryptor = SyncCryptor(secret: Self.secret, salt: Self.salt)
        let sealed = cryptor.seal(Array("SUCCESS".utf8), version: Self.version)
        #expect(sealed.count == 1 + 12 + 7 + 16 && sealed[0] == 1)
        let script = """
            import sys, hashlib, uuid
            from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
            secret, client, version, sealed = sys.stdin.read().split(" ")
            key = hashlib.pbkdf2_hmac("sha256", secret.encode(), uuid.UUID(client).bytes, 600000, 32)
            aad = bytes([1]) + uuid.UUID(version).bytes
            sealed = bytes.fromhex(sealed)
            assert sealed[0] == 1
            print(ChaCha20Poly1305(key).decrypt(sealed[1:13], sealed[13:], aad).decode())
            nonce = bytes(range(12))
            print((bytes([1]) + nonce + ChaCha20Poly1305(key).encrypt(nonce, b"FROM PYTHON", aad)).hex())
            print(key.hex())
            """
        let input = "\(String(decoding: Self.secret, as: UTF8.self)) \(Self.clientID.uuidString) \(Self.version.uuidString) \(hexText(sealed))"
        let lines = try PythonCheck.run(script, input: input).split(separator: "\n").map(String.init)
        #expect(lines.first == "SUCCESS")
        #expect(lines.last == hexText(cryptor.key))
        #expect(try cryptor.unseal(hex(lines[1]), version: Self.version) == Array("FROM PYTHON".utf8))
    }

    @Test func aWrongSecretVersionEnvelopeOrChangedByteIsRefused() throws {
        let cryptor = SyncCryptor(key: PBKDF2.sha256(password: Self.secret, salt: Self.salt, iterations: 1, length: 32))
        let sealed = cryptor.seal(Array("SUCCESS".utf8), version: Self.version)
        #expect(try cryptor.unseal(sealed, version: Self.version) == Array("SUCCESS".utf8))
        #expect(throws: SyncCryptor.Failure.authenticationFailed) { try cryptor.unseal(sealed, version: UUID()) }
        let other = SyncCryptor(key: PBKDF2.sha256(password: Array("other".utf8), salt: Self.salt, iterations: 1, length: 32))
        #expect(throws: SyncCryptor.Failure.authenticationFailed) { try other.unseal(sealed, version: Self.version) }
        #expect(throws: SyncCryptor.Failure.unknownEnvelope(2)) { try cryptor.unseal([2] + sealed.dropFirst(), version: Self.version) }
        #expect(throws: SyncCryptor.Failure.tooShort) { try cryptor.unseal(Array(sealed.prefix(20)), version: Self.version) }
        for offset in 1..<sealed.count {
            var damaged = sealed
            damaged[offset] ^= 0x10
            #expect(throws: SyncCryptor.Failure.authenticationFailed) { try cryptor.unseal(damaged, version: Self.version) }
        }
        // Two seals of one payload differ (a fresh nonce each).
        #expect(cryptor.seal([1, 2, 3], version: Self.version) != cryptor.seal([1, 2, 3], version: Self.version))
    }

    /// The derived key is kept in a 0600 file and read back for the same secret and salt;
    /// another secret derives anew; a file others can read, or a link, is not trusted.
    @Test func theDerivedKeyIsCachedInAnOwnerOnlyFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sync-key-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("key")
        // (1,000 rounds: the cache does not depend on the count, which the file records.)
        let rounds = 1_000
        let key = DerivedKeyCache.key(secret: Self.secret, salt: Self.salt, at: url, iterations: rounds)
        #expect(key == SyncCryptor(secret: Self.secret, salt: Self.salt, iterations: rounds).key)
        #expect(try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int == 0o600)
        // A forged key in the file is what a cache hit returns: it is read, not derived.
        let forged = [UInt8](repeating: 7, count: 32)
        let text = try String(contentsOf: url, encoding: .utf8)
        let prefix = text.components(separatedBy: " ").prefix(4).joined(separator: " ")
        try Data((prefix + " " + hexText(forged) + "\n").utf8).write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        #expect(DerivedKeyCache.key(secret: Self.secret, salt: Self.salt, at: url, iterations: rounds) == forged)
        // Readable by others: not trusted, derived again and replaced.
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: url.path)
        #expect(DerivedKeyCache.key(secret: Self.secret, salt: Self.salt, at: url, iterations: rounds) == key)
        #expect(try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int == 0o600)
        // Another secret: derived for it.
        let otherSecret = Array("another secret".utf8)
        #expect(DerivedKeyCache.key(secret: otherSecret, salt: Self.salt, at: url, iterations: rounds) == SyncCryptor(secret: otherSecret, salt: Self.salt, iterations: rounds).key)
        // Another count (the protocol's, say): derived for it, not the file's key.
        #expect(DerivedKeyCache.key(secret: otherSecret, salt: Self.salt, at: url, iterations: rounds + 1) == SyncCryptor(secret: otherSecret, salt: Self.salt, iterations: rounds + 1).key)
        // A symbolic link at the name is not followed for reading.
        let target = directory.appendingPathComponent("target")
        try FileManager.default.moveItem(at: url, to: target)
        try FileManager.default.createSymbolicLink(at: url, withDestinationURL: target)
        #expect(DerivedKeyCache.read(url) == nil)
    }
}
