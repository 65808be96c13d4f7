import BrokerCrypto
import Testing

/// Kernel randomness: lengths, freshness and token shape.
struct SecureRandomTests {
    @Test("10,000 tokens are distinct and each decodes to 32 bytes")
    func distinctTokens() {
        var seen = Set<String>()
        for _ in 0..<10_000 {
            let token = SecureRandom.token()
            #expect(token.count == 43)
            #expect(Base64URL.decode(token)?.count == 32)
            seen.insert(token)
        }
        #expect(seen.count == 10_000)
    }

    @Test("requested lengths are honoured, including reads larger than 256 bytes", arguments: [0, 1, 16, 255, 256, 257, 4096, 100_000])
    func lengths(count: Int) {
        #expect(SecureRandom.bytes(count).count == count)
    }

    @Test("a large read is filled to the end, not left zero")
    func largeReadFilled() {
        // A short read left unfilled would leave a zero tail; 1 KiB of zeros has probability 2^-8192.
        let block = SecureRandom.bytes(65_536)
        #expect(block.suffix(1024).contains { $0 != 0 })
        #expect(Set(block).count > 200)
    }

    @Test("token length follows byteCount")
    func tokenLength() {
        #expect(Base64URL.decode(SecureRandom.token(byteCount: 16))?.count == 16)
        #expect(SecureRandom.token(byteCount: 0) == "")
    }
}
