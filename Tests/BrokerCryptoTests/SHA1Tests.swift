import BrokerCrypto
import Testing

/// FIPS 180 example messages and padding-boundary lengths for SHA-1.
struct SHA1Tests {
    @Test(
        "FIPS 180 example messages",
        arguments: [
            ("abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
            ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "84983e441c3bd26ebaae4aa1f95129e5e54670f1"),
            ("", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
        ])
    func nistExamples(message: String, digest: String) {
        #expect(Hex.encode(SHA1.hash(ascii(message))) == digest)
    }

    @Test("one million times 'a'")
    func millionA() {
        let message = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(Hex.encode(SHA1.hash(message)) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }

    // Expected digests computed with Python's hashlib over bytes 0, 1, 2, ... (mod 256).
    @Test(
        "lengths around the 56- and 64-byte padding boundaries",
        arguments: [
            (55, "8ae2d46729cfe68ff927af5eec9c7d1b66d65ac2"),
            (56, "636e2ec698dac903498e648bd2f3af641d3c88cb"),
            (63, "6d942da0c4392b123528f2905c713a3ce28364bd"),
            (64, "c6138d514ffa2135bfce0ed0b8fac65669917ec7"),
            (65, "69bd728ad6e13cd76ff19751fde427b00e395746"),
            (119, "41c89d06001bab4ab78736b44efe7ce18ce6ae08"),
            (120, "d3dbd653bd8597b7475321b60a36891278e6a04a"),
            (1000, "af0b191c2de46fe13fe0908f5a6a4e90e0cafc46"),
        ])
    func boundaryLengths(length: Int, digest: String) {
        let message = (0..<length).map { UInt8(truncatingIfNeeded: $0) }
        #expect(Hex.encode(SHA1.hash(message)) == digest)
    }

    @Test("non-contiguous collections hash like arrays")
    func nonContiguousInput() {
        let range: ClosedRange<UInt8> = 0...99
        #expect(SHA1.hash(range) == SHA1.hash(Array(range)))
        #expect(SHA1.hash("abc".utf8) == SHA1.hash(ascii("abc")))
        #expect(SHA1.hash(ascii("abc")).count == SHA1.digestByteCount)
    }
}
