import BrokerCrypto
import Testing

/// Base16 encoding in lowercase and tolerant-case, strict-content decoding.
struct HexTests {
    @Test("RFC 4648 §10 base16 vector, written in lowercase")
    func rfc4648Vector() {
        #expect(Hex.encode(ascii("foobar")) == "666f6f626172")
        #expect(Hex.decode("666F6F626172") == ascii("foobar"))
        #expect(Hex.decode("666f6f626172") == ascii("foobar"))
    }

    @Test("all byte values encode to two lowercase digits and decode back")
    func everyByte() {
        let all = (0...255).map { UInt8($0) }
        let text = Hex.encode(all)
        #expect(text.count == 512)
        #expect(text.hasPrefix("000102"))
        #expect(text.hasSuffix("fdfeff"))
        #expect(text == text.lowercased())
        #expect(Hex.decode(text) == all)
        #expect(Hex.encode([]) == "")
        #expect(Hex.decode("") == [])
    }

    @Test("odd lengths and non-hex characters are rejected", arguments: ["0", "abc", "0g", "zz", " 00", "0x00", "é0"])
    func rejects(text: String) {
        #expect(Hex.decode(text) == nil)
    }
}
