import XCTest
@testable import ObjectStoreModel

/// Written with XCTest (the rest of the suite uses Swift Testing): both runners report.
final class SHA256Tests: XCTestCase {
    private func hex(_ bytes: [UInt8]) -> String { VersionHash(bytes: bytes).hex }

    func testMatchesTheFIPSTestVectors() {
        XCTAssertEqual(hex(SHA256.hash(Array("".utf8))), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(hex(SHA256.hash(Array("abc".utf8))), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(
            hex(SHA256.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    func testHashesInPiecesLikeInOne() {
        let message = Array(repeating: UInt8(ascii: "a"), count: 1000)
        var hasher = SHA256()
        hasher.update(message[..<333])
        hasher.update(message[333...])
        XCTAssertEqual(hasher.finalize(), SHA256.hash(message))
        XCTAssertEqual(hex(SHA256.hash(message)), "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
    }
}
