import BrokerCrypto
import Testing

/// RFC 4648 §4 base64: the §10 vectors and strict rejection of malformed input.
struct Base64Tests {
    @Test(
        "RFC 4648 §10 vectors encode and decode",
        arguments: [
            ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
        ])
    func rfc4648Vectors(plain: String, encoded: String) {
        #expect(Base64.encode(ascii(plain)) == encoded)
        #expect(Base64.decode(encoded) == ascii(plain))
    }

    @Test("indexes 62 and 63 are '+' and '/'")
    func standardAlphabet() {
        #expect(Base64.encode([0xfb, 0xff, 0xbf]) == "+/+/")
        #expect(Base64.decode("+/+/") == [0xfb, 0xff, 0xbf])
    }

    @Test("varied bytes round-trip at every length up to 70")
    func roundTrip() {
        for length in 0...70 {
            let input = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ length &* 11) }
            #expect(Base64.decode(Base64.encode(input)) == input)
        }
    }

    @Test(
        "malformed input is rejected",
        arguments: [
            "Zg",  // missing padding
            "Zg=",  // short padding
            "Zg===",  // too much padding
            "Z===",  // a single symbol cannot carry a byte
            "Zm9v=",  // padding after a full quantum
            "Zg==Zg==",  // padding in the middle
            "Zm9-",  // base64url symbol
            "Zm9_",  // base64url symbol
            "Zm 9v",  // whitespace
            "Zm9v\n",  // line break
            "Zh==",  // non-zero pad bits (RFC 4648 §3.5)
            "Zm9=",  // non-zero pad bits in a two-byte tail
            "====",
            "Zm9vä===",
        ])
    func rejects(text: String) {
        #expect(Base64.decode(text) == nil)
    }
}
