import BrokerCrypto
import Testing

/// Equality that gives the right answer for equal, different, differently sized and empty inputs.
struct ConstantTimeTests {
    @Test(
        "byte arrays",
        arguments: [
            ([UInt8](), [UInt8](), true),
            ([1, 2, 3], [1, 2, 3], true),
            ([1, 2, 3], [1, 2, 4], false),
            ([0, 2, 3], [1, 2, 3], false),
            ([1, 2, 3], [1, 2], false),
            ([1, 2], [1, 2, 3], false),
            ([], [0], false),
            ([0], [], false),
            ([0, 0], [0], false),
        ] as [([UInt8], [UInt8], Bool)])
    func bytes(a: [UInt8], b: [UInt8], equal: Bool) {
        #expect(ConstantTime.equals(a, b) == equal)
        #expect(ConstantTime.equals(b, a) == equal)
    }

    @Test(
        "strings compare their UTF-8 bytes",
        arguments: [
            ("", "", true),
            ("state-123", "state-123", true),
            ("state-123", "state-124", false),
            ("state-123", "state-12", false),
            ("", "x", false),
            ("é", "e\u{301}", false),  // precomposed vs decomposed: different bytes, different secrets
            ("☃", "☃", true),
        ])
    func strings(a: String, b: String, equal: Bool) {
        #expect(ConstantTime.equals(a, b) == equal)
        #expect(ConstantTime.equals(b, a) == equal)
    }

    @Test("a difference at any position is found, in words and in the bytes after them")
    func everyPosition() {
        for length in 1...20 {
            let a = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(ConstantTime.equals(a, a))
            for position in 0..<length {
                for flip: UInt8 in [0x01, 0x80, 0xFF] {
                    var b = a
                    b[position] ^= flip
                    #expect(!ConstantTime.equals(a, b), "length \(length), byte \(position)")
                    #expect(!ConstantTime.equals(b, a), "length \(length), byte \(position)")
                }
            }
            // The same bytes and then zeros, or one byte fewer: the lengths differ.
            #expect(!ConstantTime.equals(a, a + [0]))
            #expect(!ConstantTime.equals(a + [0, 0, 0, 0, 0, 0, 0, 0], a))
            #expect(!ConstantTime.equals(Array(a.dropLast()), a))
        }
    }

    @Test("a difference in the last of many bytes is found")
    func lastByteDiffers() {
        let a = [UInt8](repeating: 7, count: 4096)
        var b = a
        b[4095] = 8
        #expect(!ConstantTime.equals(a, b))
        #expect(ConstantTime.equals(a, a))
    }
}
