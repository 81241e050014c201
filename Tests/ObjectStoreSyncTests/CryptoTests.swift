import Foundation
import Testing
@testable import ObjectStoreSync
import ObjectStoreModel

func hex(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
        let next = text.index(index, offsetBy: 2)
        bytes.append(UInt8(text[index..<next], radix: 16) ?? 0)
        index = next
    }
    return bytes
}

func hexText(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }


@Suite struct CryptoTests {
    @Test func sha256ByBlocksAgreesWithTheModelsSHA256() {
        var random = SeededRandom(seed: 1)
        for length in [0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 300, 1000] {
            let message = random.bytes(length)
            #expect(SHA256Block.hash(message) == SHA256.hash(message), "length \(length)")
        }
        #expect(hexText(SHA256Block.hash(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    /// RFC 4231, test cases 1-4, 6 and 7 (5 truncates the output).
    @Test func hmacSHA256MatchesRFC4231() {
        let cases: [([UInt8], [UInt8], String)] = [
            ([UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
            (Array("Jefe".utf8), Array("what do ya want for nothing?".utf8), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
            ([UInt8](repeating: 0xaa, count: 20), [UInt8](repeating: 0xdd, count: 50), "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
            (Array(1...25), [UInt8](repeating: 0xcd, count: 50), "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
            ([UInt8](repeating: 0xaa, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
             "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
            ([UInt8](repeating: 0xaa, count: 131),
             Array("This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.".utf8),
             "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
        ]
        for (key, message, expected) in cases {
            #expect(hexText(HMACSHA256.code(for: message, key: key)) == expected)
        }
    }

    /// RFC 7914, section 11: PBKDF2-HMAC-SHA256.
    @Test func pbkdf2MatchesRFC7914() {
        #expect(hexText(PBKDF2.sha256(password: Array("passwd".utf8), salt: Array("salt".utf8), iterations: 1, length: 64))
                == "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783")
        #expect(hexText(PBKDF2.sha256(password: Array("Password".utf8), salt: Array("NaCl".utf8), iterations: 80_000, length: 64))
                == "4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d")
    }

    /// RFC 8439: the ChaCha20 block (2.3.2), encryption (2.4.2), Poly1305 (2.5.2) and the
    /// AEAD (2.8.2).
    @Test func chacha20Poly1305MatchesRFC8439() throws {
        let key = [UInt8](0...31)
        #expect(hexText(ChaCha20.block(key: key, nonce: hex("000000090000004a00000000"), counter: 1))
                == "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4ed2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e")
        let sunscreen = Array("Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.".utf8)
        #expect(hexText(ChaCha20.xor(sunscreen, key: key, nonce: hex("000000000000004a00000000"), counter: 1))
                == "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0bf91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d807ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab77937365af90bbf74a35be6b40b8eedf2785e42874d")
        #expect(hexText(Poly1305.code(for: Array("Cryptographic Forum Research Group".utf8), key: hex("85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b")))
                == "a8061dc1305136c6c22b8baf0c0127a9")
        let aeadKey = [UInt8](0x80...0x9f), nonce = hex("070000004041424344454647"), aad = hex("50515253c0c1c2c3c4c5c6c7")
        let (ciphertext, tag) = ChaCha20Poly1305.seal(sunscreen, key: aeadKey, nonce: nonce, authenticating: aad)
        #expect(hexText(ciphertext) == "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc3ff4def08e4b7a9de576d26586cec64b6116")
        #expect(hexText(tag) == "1ae10b594f09e26a7e902ecbd0600691")
        #expect(try ChaCha20Poly1305.open(ciphertext, tag: tag, key: aeadKey, nonce: nonce, authenticating: aad) == sunscreen)
        // Any flipped bit of the ciphertext, the tag or the additional data is refused.
        var tampered = ciphertext
        tampered[7] ^= 1
        #expect(throws: ChaCha20Poly1305.AuthenticationFailure.self) { try ChaCha20Poly1305.open(tampered, tag: tag, key: aeadKey, nonce: nonce, authenticating: aad) }
        #expect(throws: ChaCha20Poly1305.AuthenticationFailure.self) { try ChaCha20Poly1305.open(ciphertext, tag: tag, key: aeadKey, nonce: nonce, authenticating: aad + [0]) }
        var badTag = tag
        badTag[15] ^= 0x80
        #expect(throws: ChaCha20Poly1305.AuthenticationFailure.self) { try ChaCha20Poly1305.open(ciphertext, tag: badTag, key: aeadKey, nonce: nonce, authenticating: aad) }
    }

    /// Poly1305's edge cases: messages of every length up to three blocks, keys whose r
    /// and s are all ones (the carries), checked against Python's `cryptography`.
    @Test(.enabled(if: PythonCheck.cryptography, PythonCheck.skipReason))
    func sealedDataOpensInPythonAndTheOtherWay() throws {
        var random = SeededRandom(seed: 7)
        var lines: [String] = []
        var ours: [(key: [UInt8], nonce: [UInt8], aad: [UInt8], plaintext: [UInt8], sealed: [UInt8])] = []
        for length in Array(0...48) + [63, 64, 65, 1000, 4096] {
            let key = length % 5 == 0 ? [UInt8](repeating: 0xff, count: 32) : random.bytes(32)
            let nonce = random.bytes(12), aad = random.bytes(length % 17), plaintext = random.bytes(length)
            let (ciphertext, tag) = ChaCha20Poly1305.seal(plaintext, key: key, nonce: nonce, authenticating: aad)
            ours.append((key, nonce, aad, plaintext, ciphertext + tag))
            lines.append([key, nonce, aad, plaintext, ciphertext + tag].map(hexText).joined(separator: " "))
        }
        let script = """
            import sys
            from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
            for line in sys.stdin.read().split("\\n"):
                key, nonce, aad, plaintext, sealed = [bytes.fromhex(p) for p in line.split(" ")]
                assert ChaCha20Poly1305(key).decrypt(nonce, sealed, aad) == plaintext
                print(ChaCha20Poly1305(key).encrypt(nonce, plaintext[::-1], aad).hex())
            """
        let output = try PythonCheck.run(script, input: lines.joined(separator: "\n"))
        let sealedByPython = output.split(separator: "\n").map { hex(String($0)) }
        #expect(sealedByPython.count == ours.count)
        for (sealed, item) in zip(sealedByPython, ours) {
            let opened = try ChaCha20Poly1305.open(Array(sealed.dropLast(16)), tag: Array(sealed.suffix(16)), key: item.key, nonce: item.nonce, authenticating: item.aad)
            #expect(opened == Array(item.plaintext.reversed()))
        }
    }

    @Test(.enabled(if: PythonCheck.available, PythonCheck.skipReason))
    func hmacAndPBKDF2AgreeWithPythonsHashlib() throws {
        var random = SeededRandom(seed: 11)
        var lines: [String] = []
        var ours: [String] = []
        for round in 0..<40 {
            let key = random.bytes(round * 5 % 150), message = random.bytes(round * 37 % 300), salt = random.bytes(round % 24)
            let iterations = 1 + round * 97 % 700
            lines.append("\(hexText(key)) \(hexText(message)) \(hexText(salt)) \(iterations)")
            ours.append(hexText(HMACSHA256.code(for: message, key: key)) + " " + hexText(PBKDF2.sha256(password: key, salt: salt, iterations: iterations, length: 32 + round)))
        }
        let pythonScript = """
            import sys, hmac, hashlib
            for round, line in enumerate(sys.stdin.read().split("\\n")):
                key, message, salt, iterations = line.split(" ")
                key, message, salt = bytes.fromhex(key), bytes.fromhex(message), bytes.fromhex(salt)
                print(hmac.new(key, message, hashlib.sha256).hexdigest(), hashlib.pbkdf2_hmac("sha256", key, salt, int(iterations), 32 + round).hex())
            """
        let output = try PythonCheck.run(pythonScript, input: lines.joined(separator: "\n"))
        #expect(output.split(separator: "\n").map(String.init) == ours)
    }
}

/// Python 3 (and its `cryptography` package) to check against; a test that needs them
/// skips without them, but not under CI, where .ci/run's machine has them.
enum PythonCheck {
    static let python: String? = ["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static let isCI = ProcessInfo.processInfo.environment["CI"] == "true"
    static let available = python != nil || isCI
    static let cryptography: Bool = {
        guard python != nil else { return isCI }
        return ((try? run("import cryptography; print('yes')", input: "")) == "yes\n") || isCI
    }()
    static let skipReason: Comment = "needs python3 (and its cryptography package) to compare with; CI has them"

    static func run(_ script: String, input: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python ?? "/usr/bin/python3")
        process.arguments = ["-c", script]
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let writer = Thread {
            stdin.fileHandleForWriting.write(Data(input.utf8))
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        let err = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: String(decoding: err, as: UTF8.self)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
