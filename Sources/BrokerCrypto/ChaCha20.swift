/// The ChaCha20 stream cipher of RFC 8439 §2.3–§2.4: a 256-bit key, a 96-bit nonce and a 32-bit block counter.
///
/// Key and nonce lengths are programmer errors here and stop the process; callers that take
/// them from outside should check first (``ChaCha20Poly1305/open(key:nonce:ciphertext:tag:aad:)`` does).
public enum ChaCha20 {
    /// The key length in bytes.
    public static let keyByteCount = 32
    /// The nonce length in bytes.
    public static let nonceByteCount = 12
    /// The length of one keystream block in bytes.
    public static let blockByteCount = 64

    /// Returns the 64-byte keystream block for `counter` (RFC 8439 §2.3).
    public static func block(key: [UInt8], counter: UInt32, nonce: [UInt8]) -> [UInt8] {
        xor(key: key, nonce: nonce, counter: counter, [UInt8](repeating: 0, count: blockByteCount))
    }

    /// Encrypts or decrypts `data` by XOR with the keystream that starts at block `counter` (RFC 8439 §2.4).
    public static func xor(key: [UInt8], nonce: [UInt8], counter: UInt32, _ data: [UInt8]) -> [UInt8] {
        precondition(key.count == keyByteCount, "ChaCha20: key must be 32 bytes")
        precondition(nonce.count == nonceByteCount, "ChaCha20: nonce must be 12 bytes")
        let blocks = (data.count + blockByteCount - 1) / blockByteCount
        // RFC 8439 §2.3: the 32-bit counter limits one (key, nonce) pair to 2^32 blocks.
        precondition(UInt64(counter) + UInt64(blocks) <= 1 << 32, "ChaCha20: block counter would wrap")
        var output = data
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 32) { words in
            let input = words.baseAddress!
            let keystream = input + 16
            setUp(input, key: key, counter: counter, nonce: nonce)
            output.withUnsafeMutableBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    keystreamBlock(input, into: keystream)
                    let length = min(blockByteCount, bytes.count - offset)
                    xorBlock(bytes.baseAddress! + offset, length: length, keystream: keystream)
                    input[12] &+= 1
                    offset += length
                }
            }
        }
        return output
    }

    /// RFC 8439 §2.3: constants, eight little-endian key words, the counter, three nonce words.
    static func setUp(_ state: UnsafeMutablePointer<UInt32>, key: [UInt8], counter: UInt32, nonce: [UInt8]) {
        state[0] = 0x6170_7865; state[1] = 0x3320_646e; state[2] = 0x7962_2d32; state[3] = 0x6b20_6574
        for index in 0..<8 { state[4 + index] = littleEndianWord(key, at: index * 4) }
        state[12] = counter
        for index in 0..<3 { state[13 + index] = littleEndianWord(nonce, at: index * 4) }
    }

    /// Reads the little-endian 32-bit word that starts at `offset`.
    @inline(__always)
    private static func littleEndianWord(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
    }

    /// XORs up to 64 bytes at `pointer` with the serialized (little-endian) keystream words.
    @inline(__always)
    private static func xorBlock(_ pointer: UnsafeMutableRawPointer, length: Int, keystream: UnsafePointer<UInt32>) {
        if length == blockByteCount {
            for index in 0..<16 {
                let word = UInt32(littleEndian: pointer.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self))
                pointer.storeBytes(of: (word ^ keystream[index]).littleEndian, toByteOffset: index * 4, as: UInt32.self)
            }
        } else {
            for index in 0..<length {
                let byte = UInt8(truncatingIfNeeded: keystream[index / 4] >> (8 * UInt32(index % 4)))
                pointer.storeBytes(of: pointer.load(fromByteOffset: index, as: UInt8.self) ^ byte, toByteOffset: index, as: UInt8.self)
            }
        }
    }

    /// RFC 8439 §2.1: the quarter round on four state words.
    @inline(__always)
    static func quarterRound(_ a: inout UInt32, _ b: inout UInt32, _ c: inout UInt32, _ d: inout UInt32) {
        a &+= b; d ^= a; d = d.rotatedLeft(16)
        c &+= d; b ^= c; b = b.rotatedLeft(12)
        a &+= b; d ^= a; d = d.rotatedLeft(8)
        c &+= d; b ^= c; b = b.rotatedLeft(7)
    }

    /// RFC 8439 §2.3.1: 10 double rounds on a copy of `input`, then adds `input` word by word.
    static func keystreamBlock(_ input: UnsafePointer<UInt32>, into output: UnsafeMutablePointer<UInt32>) {
        var x0 = input[0], x1 = input[1], x2 = input[2], x3 = input[3]
        var x4 = input[4], x5 = input[5], x6 = input[6], x7 = input[7]
        var x8 = input[8], x9 = input[9], x10 = input[10], x11 = input[11]
        var x12 = input[12], x13 = input[13], x14 = input[14], x15 = input[15]
        for _ in 0..<10 {
            // Column round.
            quarterRound(&x0, &x4, &x8, &x12)
            quarterRound(&x1, &x5, &x9, &x13)
            quarterRound(&x2, &x6, &x10, &x14)
            quarterRound(&x3, &x7, &x11, &x15)
            // Diagonal round.
            quarterRound(&x0, &x5, &x10, &x15)
            quarterRound(&x1, &x6, &x11, &x12)
            quarterRound(&x2, &x7, &x8, &x13)
            quarterRound(&x3, &x4, &x9, &x14)
        }
        output[0] = x0 &+ input[0]; output[1] = x1 &+ input[1]; output[2] = x2 &+ input[2]; output[3] = x3 &+ input[3]
        output[4] = x4 &+ input[4]; output[5] = x5 &+ input[5]; output[6] = x6 &+ input[6]; output[7] = x7 &+ input[7]
        output[8] = x8 &+ input[8]; output[9] = x9 &+ input[9]; output[10] = x10 &+ input[10]; output[11] = x11 &+ input[11]
        output[12] = x12 &+ input[12]; output[13] = x13 &+ input[13]; output[14] = x14 &+ input[14]; output[15] = x15 &+ input[15]
    }
}
