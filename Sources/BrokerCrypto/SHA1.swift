/// The SHA-1 hash function of FIPS 180-4, kept for OAuth 1.0a HMAC-SHA1 signatures.
///
/// SHA-1 is broken for collision resistance; use it only where a protocol demands it
/// (RFC 5849 §3.4.2). HMAC-SHA1 is still sound as a MAC.
public enum SHA1 {
    /// The length of a SHA-1 digest in bytes.
    public static let digestByteCount = 20

    /// Returns the 20-byte SHA-1 digest of `data`.
    public static func hash<Bytes: Collection>(_ data: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        MerkleDamgard.withBytes(of: data) { hash(message: $0) }
    }

    /// Hashes raw bytes: FIPS 180-4 §6.1.2.
    static func hash(message: UnsafeRawBufferPointer) -> [UInt8] {
        // FIPS 180-4 §5.3.1: initial hash value.
        var h0: UInt32 = 0x6745_2301, h1: UInt32 = 0xEFCD_AB89, h2: UInt32 = 0x98BA_DCFE
        var h3: UInt32 = 0x1032_5476, h4: UInt32 = 0xC3D2_E1F0
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 80) { w in
            MerkleDamgard.forEachBlock(of: message) { block in
                // FIPS 180-4 §6.1.2 step 1: the message schedule.
                for t in 0..<16 { w[t] = MerkleDamgard.word(block, t) }
                for t in 16..<80 {
                    let x = w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16]
                    w[t] = x.rotatedLeft(1)
                }
                var a = h0, b = h1, c = h2, d = h3, e = h4
                for t in 0..<80 {
                    // FIPS 180-4 §4.1.1 functions and §4.2.1 constants.
                    let f: UInt32, k: UInt32
                    switch t {
                    case 0..<20: f = (b & c) | (~b & d); k = 0x5A82_7999
                    case 20..<40: f = b ^ c ^ d; k = 0x6ED9_EBA1
                    case 40..<60: f = (b & c) | (b & d) | (c & d); k = 0x8F1B_BCDC
                    default: f = b ^ c ^ d; k = 0xCA62_C1D6
                    }
                    let temp = a.rotatedLeft(5) &+ f &+ e &+ k &+ w[t]
                    e = d; d = c; c = b.rotatedLeft(30); b = a; a = temp
                }
                h0 &+= a; h1 &+= b; h2 &+= c; h3 &+= d; h4 &+= e
            }
        }
        return MerkleDamgard.digest([h0, h1, h2, h3, h4])
    }
}
