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

    @Test("uppercase encoding, as percent-encoding and file names want it")
    func uppercase() {
        #expect(Hex.encode([0x00, 0x3A, 0xAF, 0xFF], uppercase: true) == "003AAFFF")
        #expect(Hex.encode([0x3A, 0xAF]) == "3aaf")
    }

    @Test("one digit: its value in either case, and the digit of each nibble")
    func singleDigits() {
        let digits = Array("0123456789abcdefABCDEF".utf8)
        #expect(digits.map { Hex.value(of: $0) } == (0...15).map { UInt8($0) } + (10...15).map { UInt8($0) })
        for byte in (0...255).map(UInt8.init) where !digits.contains(byte) {
            #expect(Hex.value(of: byte) == nil, "\(byte)")
        }
        #expect((0...15).map { Hex.digit(UInt8($0)) } == Array("0123456789abcdef".utf8))
        #expect((0...15).map { Hex.digit(UInt8($0), uppercase: true) } == Array("0123456789ABCDEF".utf8))
        // Only the low four bits count, so a caller may pass a whole byte for its low nibble.
        #expect(Hex.digit(0xAF) == UInt8(ascii: "f"))
    }
}
