import BrokerCrypto
import Testing

/// RFC 8439 §2.8.2 and A.5 AEAD vectors, and rejection of every kind of tampering.
/// Both vectors were also checked against pyca/cryptography before being pasted here.
struct ChaCha20Poly1305Tests {
    static let key = bytes("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f")
    /// The 32-bit fixed-common part 07 00 00 00 followed by the IV "@ABCDEFG".
    static let nonce = bytes("070000004041424344454647")
    static let aad = bytes("50515253c0c1c2c3c4c5c6c7")
    static let plaintext = ascii(
        "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.")
    static let ciphertext = bytes(
        """
        d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d6
        3dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36
        92ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc
        3ff4def08e4b7a9de576d26586cec64b6116
        """)
    static let tag = bytes("1ae10b594f09e26a7e902ecbd0600691")

    @Test("RFC 8439 §2.8.2 seal")
    func seal() {
        let sealed = ChaCha20Poly1305.seal(key: Self.key, nonce: Self.nonce, plaintext: Self.plaintext, aad: Self.aad)
        #expect(sealed.ciphertext == Self.ciphertext)
        #expect(sealed.tag == Self.tag)
    }

    @Test("RFC 8439 §2.8.2 open")
    func open() throws {
        let opened = try ChaCha20Poly1305.open(key: Self.key, nonce: Self.nonce, ciphertext: Self.ciphertext, tag: Self.tag, aad: Self.aad)
        #expect(opened == Self.plaintext)
    }

    @Test("RFC 8439 A.5 decryption")
    func appendixA5() throws {
        let plaintext = try ChaCha20Poly1305.open(
            key: bytes("1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0"),
            nonce: bytes("000000000102030405060708"),
            ciphertext: bytes(
                """
                64a0861575861af460f062c79be643bd5e805cfd345cf389f108670ac76c8cb2
                4c6cfc18755d43eea09ee94e382d26b0bdb7b73c321b0100d4f03b7f355894cf
                332f830e710b97ce98c8a84abd0b948114ad176e008d33bd60f982b1ff37c855
                9797a06ef4f0ef61c186324e2b3506383606907b6a7c02b0f9f6157b53c867e4
                b9166c767b804d46a59b5216cde7a4e99040c5a40433225ee282a1b0a06c523e
                af4534d7f83fa1155b0047718cbc546a0d072b04b3564eea1b422273f548271a
                0bb2316053fa76991955ebd63159434ecebb4e466dae5a1073a6727627097a10
                49e617d91d361094fa68f0ff77987130305beaba2eda04df997b714d6c6f2c29
                a6ad5cb4022b02709b
                """),
            tag: bytes("eead9d67890cbb22392336fea1851f38"),
            aad: bytes("f33388860000000000004e91"))
        #expect(
            String(decoding: plaintext, as: UTF8.self)
                == "Internet-Drafts are draft documents valid for a maximum of six months and may be updated, replaced, or obsoleted by other documents at any time. It is inappropriate to use Internet-Drafts as reference material or to cite them other than as /“work in progress./”"
        )
    }

    @Test("a flipped bit in ciphertext, tag or aad fails authentication", arguments: ["ciphertext", "tag", "aad"])
    func tampering(field: String) {
        for bit in [0, 7, 13, 50] {
            var ciphertext = Self.ciphertext, tag = Self.tag, aad = Self.aad
            switch field {
            case "ciphertext": ciphertext[bit % ciphertext.count] ^= 1 << (bit % 8)
            case "tag": tag[bit % tag.count] ^= 1 << (bit % 8)
            default: aad[bit % aad.count] ^= 1 << (bit % 8)
            }
            #expect(throws: CryptoError.authenticationFailed) {
                try ChaCha20Poly1305.open(key: Self.key, nonce: Self.nonce, ciphertext: ciphertext, tag: tag, aad: aad)
            }
        }
    }

    @Test("a wrong key, nonce, missing aad or short tag fails authentication")
    func wrongInputs() {
        var otherKey = Self.key
        otherKey[0] ^= 0x80
        var otherNonce = Self.nonce
        otherNonce[11] ^= 0x01
        #expect(throws: CryptoError.authenticationFailed) {
            try ChaCha20Poly1305.open(key: otherKey, nonce: Self.nonce, ciphertext: Self.ciphertext, tag: Self.tag, aad: Self.aad)
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try ChaCha20Poly1305.open(key: Self.key, nonce: otherNonce, ciphertext: Self.ciphertext, tag: Self.tag, aad: Self.aad)
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try ChaCha20Poly1305.open(key: Self.key, nonce: Self.nonce, ciphertext: Self.ciphertext, tag: Self.tag)
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try ChaCha20Poly1305.open(
                key: Self.key, nonce: Self.nonce, ciphertext: Self.ciphertext, tag: Array(Self.tag.prefix(15)), aad: Self.aad)
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try ChaCha20Poly1305.open(
                key: Self.key, nonce: Self.nonce, ciphertext: Array(Self.ciphertext.dropLast()), tag: Self.tag, aad: Self.aad)
        }
    }

    @Test("bad key and nonce lengths are reported as such")
    func badLengths() {
        #expect(throws: CryptoError.invalidKeyLength) {
            try ChaCha20Poly1305.open(key: Array(Self.key.prefix(16)), nonce: Self.nonce, ciphertext: Self.ciphertext, tag: Self.tag)
        }
        #expect(throws: CryptoError.invalidNonceLength) {
            try ChaCha20Poly1305.open(key: Self.key, nonce: Self.nonce + [0], ciphertext: Self.ciphertext, tag: Self.tag)
        }
    }

    @Test("round trip at lengths around the 16- and 64-byte block edges")
    func roundTrips() throws {
        let key = SecureRandom.bytes(32)
        for length in [0, 1, 15, 16, 17, 63, 64, 65, 1000] {
            let nonce = SecureRandom.bytes(12)
            let plaintext = SecureRandom.bytes(length)
            let aad = SecureRandom.bytes(length % 20)
            let sealed = ChaCha20Poly1305.seal(key: key, nonce: nonce, plaintext: plaintext, aad: aad)
            #expect(sealed.ciphertext.count == length)
            #expect(sealed.tag.count == 16)
            let opened = try ChaCha20Poly1305.open(key: key, nonce: nonce, ciphertext: sealed.ciphertext, tag: sealed.tag, aad: aad)
            #expect(opened == plaintext)
        }
    }
}
