import BrokerCrypto
import Testing

/// One Poly1305 vector: one-time key, message and expected tag.
struct Poly1305Vector: Sendable, CustomTestStringConvertible {
    let name: String
    let key: String
    let message: [UInt8]
    let tag: String
    var testDescription: String { name }
}

/// RFC 8439 §2.5.2 and Appendix A.3 vectors, including the edge cases of partial reduction (#5–#11).
/// Every vector was also checked against pyca/cryptography before being pasted here.
struct Poly1305Tests {
    static let ietfText =
        "Any submission to the IETF intended by the Contributor for publication as all or part of an IETF Internet-Draft or RFC and any statement made within the context of an IETF activity is considered an \"IETF Contribution\". Such statements include oral statements in IETF sessions, as well as written and electronic communications made at any time or place, which are addressed to"

    static let vectors: [Poly1305Vector] = [
        Poly1305Vector(
            name: "RFC 8439 2.5.2",
            key: "85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b",
            message: ascii("Cryptographic Forum Research Group"),
            tag: "a8061dc1305136c6c22b8baf0c0127a9"),
        Poly1305Vector(
            name: "RFC 8439 A.3#1",
            key: "0000000000000000000000000000000000000000000000000000000000000000",
            message: bytes(
                """
                0000000000000000000000000000000000000000000000000000000000000000
                0000000000000000000000000000000000000000000000000000000000000000
                """),
            tag: "00000000000000000000000000000000"),
        Poly1305Vector(
            name: "RFC 8439 A.3#2",
            key: "0000000000000000000000000000000036e5f6b5c5e06070f0efca96227a863e",
            message: ascii(Poly1305Tests.ietfText),
            tag: "36e5f6b5c5e06070f0efca96227a863e"),
        Poly1305Vector(
            name: "RFC 8439 A.3#3",
            key: "36e5f6b5c5e06070f0efca96227a863e00000000000000000000000000000000",
            message: ascii(Poly1305Tests.ietfText),
            tag: "f3477e7cd95417af89a6b8794c310cf0"),
        Poly1305Vector(
            name: "RFC 8439 A.3#4",
            key: "1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0",
            message: ascii(
                "'Twas brillig, and the slithy toves\nDid gyre and gimble in the wabe:\nAll mimsy were the borogoves,\nAnd the mome raths outgrabe."
            ),
            tag: "4541669a7eaaee61e708dc7cbcc5eb62"),
        Poly1305Vector(
            name: "RFC 8439 A.3#5",
            key: "0200000000000000000000000000000000000000000000000000000000000000",
            message: bytes("ffffffffffffffffffffffffffffffff"),
            tag: "03000000000000000000000000000000"),
        Poly1305Vector(
            name: "RFC 8439 A.3#6",
            key: "02000000000000000000000000000000ffffffffffffffffffffffffffffffff",
            message: bytes("02000000000000000000000000000000"),
            tag: "03000000000000000000000000000000"),
        Poly1305Vector(
            name: "RFC 8439 A.3#7",
            key: "0100000000000000000000000000000000000000000000000000000000000000",
            message: bytes(
                """
                fffffffffffffffffffffffffffffffff0ffffffffffffffffffffffffffffff
                11000000000000000000000000000000
                """),
            tag: "05000000000000000000000000000000"),
        Poly1305Vector(
            name: "RFC 8439 A.3#8",
            key: "0100000000000000000000000000000000000000000000000000000000000000",
            message: bytes(
                """
                fffffffffffffffffffffffffffffffffbfefefefefefefefefefefefefefefe
                01010101010101010101010101010101
                """),
            tag: "00000000000000000000000000000000"),
        Poly1305Vector(
            name: "RFC 8439 A.3#9",
            key: "0200000000000000000000000000000000000000000000000000000000000000",
            message: bytes("fdffffffffffffffffffffffffffffff"),
            tag: "faffffffffffffffffffffffffffffff"),
        Poly1305Vector(
            name: "RFC 8439 A.3#10",
            key: "0100000000000000040000000000000000000000000000000000000000000000",
            message: bytes(
                """
                e33594d7505e43b900000000000000003394d7505e4379cd0100000000000000
                0000000000000000000000000000000001000000000000000000000000000000
                """),
            tag: "14000000000000005500000000000000"),
        Poly1305Vector(
            name: "RFC 8439 A.3#11",
            key: "0100000000000000040000000000000000000000000000000000000000000000",
            message: bytes(
                """
                e33594d7505e43b900000000000000003394d7505e4379cd0100000000000000
                00000000000000000000000000000000
                """),
            tag: "13000000000000000000000000000000"),
    ]

    @Test("RFC 8439 tags", arguments: vectors)
    func tag(vector: Poly1305Vector) {
        #expect(Hex.encode(Poly1305.authenticate(key: bytes(vector.key), message: vector.message)) == vector.tag)
    }

    @Test("the empty message authenticates to s")
    func emptyMessage() {
        let key = bytes(Self.vectors[0].key)
        #expect(Poly1305.authenticate(key: key, message: []) == Array(key.suffix(16)))
    }

    @Test("one changed message bit changes the tag")
    func bitFlipChangesTag() {
        let vector = Self.vectors[0]
        var message = vector.message
        message[5] ^= 0x01
        #expect(Hex.encode(Poly1305.authenticate(key: bytes(vector.key), message: message)) != vector.tag)
    }
}
