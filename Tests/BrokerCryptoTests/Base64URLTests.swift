import BrokerCrypto
import Testing

/// RFC 4648 §5 base64url: unpadded on encode, padding optional on decode, and the RFC 7636 verifier.
struct Base64URLTests {
    @Test("indexes 62 and 63 are '-' and '_'")
    func urlAlphabet() {
        #expect(Base64URL.encode([0xfb, 0xff, 0xbf]) == "-_-_")
        #expect(Base64URL.decode("-_-_") == [0xfb, 0xff, 0xbf])
    }

    @Test(
        "RFC 4648 §10 vectors without padding; decode takes either form",
        arguments: [
            ("", "", ""), ("f", "Zg", "Zg=="), ("fo", "Zm8", "Zm8="), ("foo", "Zm9v", "Zm9v"),
            ("foob", "Zm9vYg", "Zm9vYg=="), ("fooba", "Zm9vYmE", "Zm9vYmE="), ("foobar", "Zm9vYmFy", "Zm9vYmFy"),
        ])
    func vectors(plain: String, unpadded: String, padded: String) {
        #expect(Base64URL.encode(ascii(plain)) == unpadded)
        #expect(Base64URL.decode(unpadded) == ascii(plain))
        #expect(Base64URL.decode(padded) == ascii(plain))
    }

    @Test("RFC 7636 Appendix B: the example octets encode to the example code verifier")
    func pkceVerifier() {
        let octets: [UInt8] = [
            116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186,
            22, 212, 37, 77, 105, 214, 191, 240, 91, 88, 5, 88, 83, 132, 141, 121,
        ]
        #expect(Base64URL.encode(octets) == "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        #expect(Base64URL.decode("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") == octets)
    }

    @Test(
        "decoding from bytes answers as decoding from the string, valid or not",
        arguments: [
            "", "Zg", "Zg==", "Zm9vYmFy", "-_-_", "Z", "Zg=", "Zg===", "Zm9v=", "+/+/", "Zg==Zg", "Zh", "Zm 9v", "=", "==",
        ])
    func bytesAgreeWithString(text: String) {
        let fromBytes = Array(text.utf8).withUnsafeBufferPointer { Base64URL.decode(utf8: $0) }
        #expect(fromBytes == Base64URL.decode(text))
    }

    @Test(
        "the decoded count is the length of what decoding gives, nil exactly where decoding fails",
        arguments: [
            "", "Zg", "Zg==", "Zm8", "Zm8=", "Zm9vYmFy", "-_-_", "Z", "Zg=", "Zg===", "Zm9v=", "+/+/", "Zg==Zg", "Zh", "Zm9", "Zm 9v",
            "=", "==", "AAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB",
        ])
    func decodedCountAgreesWithDecoding(text: String) {
        let count = Array(text.utf8).withUnsafeBufferPointer { Base64URL.decodedCount(utf8: $0) }
        #expect(count == Base64URL.decode(text)?.count)
    }

    @Test("the decoded count agrees with decoding for every two-symbol and three-symbol tail")
    func decodedCountAgreesOnEveryTail() {
        // Every symbol of the alphabet and a few outside it, in the last places, where the pad bits must be zero.
        let symbols = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/=.".utf8)
        for first in symbols {
            for last in symbols {
                for text in [[first, last], [UInt8(ascii: "Q"), first, last], Array("Zm9v".utf8) + [first, last]] {
                    let count = text.withUnsafeBufferPointer { Base64URL.decodedCount(utf8: $0) }
                    let decoded = text.withUnsafeBufferPointer { Base64URL.decode(utf8: $0) }
                    #expect(count == decoded?.count, "\(String(decoding: text, as: UTF8.self))")
                }
            }
        }
    }

    @Test(
        "malformed input is rejected",
        arguments: [
            "Z",  // a single symbol cannot carry a byte
            "Zg=",  // padding present but short
            "Zg===",  // too much padding
            "Zm9v=",  // padding after a full quantum
            "+/+/",  // standard-alphabet symbols
            "Zg==Zg",  // padding in the middle
            "Zh",  // non-zero pad bits
            "Zm 9v",  // whitespace
        ])
    func rejects(text: String) {
        #expect(Base64URL.decode(text) == nil)
    }
}
