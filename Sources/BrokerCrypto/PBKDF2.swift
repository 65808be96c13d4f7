/// Password-based key derivation (PBKDF2, RFC 8018 §5.2) with HMAC-SHA256 as the pseudorandom function.
///
/// SCRAM-SHA-256 (RFC 7677, RFC 5802 §3) derives its SaltedPassword with it. Tested with the
/// PBKDF2-HMAC-SHA256 vectors of RFC 7914 §11.
public enum PBKDF2 {
    /// Returns `length` bytes derived from `password` and `salt` with `iterations` rounds of HMAC-SHA256.
    ///
    /// `iterations` below 1 is taken as 1 and a `length` below 1 gives no bytes: callers that take these
    /// figures from the network check them first (a server's SCRAM iteration count is bounded by its caller).
    public static func sha256(password: [UInt8], salt: [UInt8], iterations: Int, length: Int) -> [UInt8] {
        let rounds = max(1, iterations)
        guard length > 0 else { return [] }
        let hashLength = SHA256.digestByteCount
        var derived: [UInt8] = []
        derived.reserveCapacity(length + hashLength)
        // RFC 8018 §5.2 step 2: l = ceil(dkLen / hLen) blocks, T_i = F(P, S, c, i).
        var blockIndex: UInt32 = 1
        while derived.count < length {
            // U_1 = PRF(P, S || INT(i)), INT big-endian.
            var u = HMAC.sha256(
                key: password,
                message: salt + [
                    UInt8(blockIndex >> 24), UInt8(truncatingIfNeeded: blockIndex >> 16),
                    UInt8(truncatingIfNeeded: blockIndex >> 8), UInt8(truncatingIfNeeded: blockIndex),
                ])
            var block = u
            // U_j = PRF(P, U_{j-1}); T_i = U_1 ^ U_2 ^ … ^ U_c.
            var round = 1
            while round < rounds {
                u = HMAC.sha256(key: password, message: u)
                for index in 0..<hashLength { block[index] ^= u[index] }
                round += 1
            }
            derived += block
            blockIndex &+= 1
        }
        // RFC 8018 §5.2 step 4: the first dkLen octets.
        return Array(derived.prefix(length))
    }
}
