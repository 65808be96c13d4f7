import BrokerCrypto
import Testing

/// FIPS 180 example messages and padding-boundary lengths for SHA-256.
struct SHA256Tests {
    @Test(
        "FIPS 180 example messages",
        arguments: [
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
            ),
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ])
    func nistExamples(message: String, digest: String) {
        #expect(Hex.encode(SHA256.hash(ascii(message))) == digest)
    }

    @Test("one million times 'a'")
    func millionA() {
        let message = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(Hex.encode(SHA256.hash(message)) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    // Expected digests computed with Python's hashlib over bytes 0, 1, 2, ... (mod 256).
    @Test(
        "lengths around the 56- and 64-byte padding boundaries",
        arguments: [
            (55, "463eb28e72f82e0a96c0a4cc53690c571281131f672aa229e0d45ae59b598b59"),
            (56, "da2ae4d6b36748f2a318f23e7ab1dfdf45acdc9d049bd80e59de82a60895f562"),
            (63, "29af2686fd53374a36b0846694cc342177e428d1647515f078784d69cdb9e488"),
            (64, "fdeab9acf3710362bd2658cdc9a29e8f9c757fcf9811603a8c447cd1d9151108"),
            (65, "4bfd2c8b6f1eec7a2afeb48b934ee4b2694182027e6d0fc075074f2fabb31781"),
            (119, "da18797ed7c3a777f0847f429724a2d8cd5138e6ed2895c3fa1a6d39d18f7ec6"),
            (120, "f52b23db1fbb6ded89ef42a23ce0c8922c45f25c50b568a93bf1c075420bbb7c"),
            (1000, "a8af099bf2e878609558dbf69d8f88f4a31040a8cf84b549a0cfa912f12ffc3f"),
        ])
    func boundaryLengths(length: Int, digest: String) {
        let message = (0..<length).map { UInt8(truncatingIfNeeded: $0) }
        #expect(Hex.encode(SHA256.hash(message)) == digest)
    }

    @Test("non-contiguous collections hash like arrays")
    func nonContiguousInput() {
        let range: ClosedRange<UInt8> = 0...99
        #expect(SHA256.hash(range) == SHA256.hash(Array(range)))
        #expect(SHA256.hash(ascii("abc")[...]) == SHA256.hash(ascii("abc")))
        #expect(SHA256.hash(ascii("abc")).count == SHA256.digestByteCount)
    }

    @Test("RFC 7636 Appendix B: S256 code challenge of the example verifier")
    func pkceChallenge() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        let digest = SHA256.hash(verifier.utf8)
        #expect(
            digest == [
                19, 211, 30, 150, 26, 26, 216, 236, 47, 22, 177, 12, 76, 152, 46, 8,
                118, 168, 120, 173, 109, 241, 68, 86, 110, 225, 137, 74, 203, 112, 249, 195,
            ])
        #expect(Base64URL.encode(digest) == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    }
}
