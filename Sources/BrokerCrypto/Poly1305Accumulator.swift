/// The running state of one Poly1305 computation, in five 26-bit limbs (the poly1305-donna 32-bit layout).
///
/// All arithmetic is branch-free on secret data: products fit in 64 bits, and the final
/// reduction modulo 2^130 - 5 selects with a mask instead of a comparison.
struct Poly1305Accumulator {
    /// How a trailing partial block (fewer than 16 bytes) is absorbed.
    enum Trailing {
        /// RFC 8439 §2.5.1: the message ends here; append 0x01 after the last byte, no 2^128 bit.
        case messageEnd
        /// RFC 8439 §2.8: pad16, zero bytes fill the block, which then counts as a full block.
        case zeroPadded
    }

    private static let mask: UInt64 = 0x3ff_ffff
    private let r0, r1, r2, r3, r4: UInt64
    private let s1, s2, s3, s4: UInt64
    private let pad: (UInt64, UInt64, UInt64, UInt64)
    private var h0: UInt64 = 0, h1: UInt64 = 0, h2: UInt64 = 0, h3: UInt64 = 0, h4: UInt64 = 0

    /// Reads r (clamped) and s from a 32-byte one-time key.
    init(key: [UInt8]) {
        let t = key.withUnsafeBytes { bytes in
            (0..<8).map { UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self))) }
        }
        // RFC 8439 §2.5: clamp r &= 0x0ffffffc0ffffffc0ffffffc0fffffff, split into 26-bit limbs.
        r0 = t[0] & 0x3ff_ffff
        r1 = ((t[0] >> 26) | (t[1] << 6)) & 0x3ff_ff03
        r2 = ((t[1] >> 20) | (t[2] << 12)) & 0x3ff_c0ff
        r3 = ((t[2] >> 14) | (t[3] << 18)) & 0x3f0_3fff
        r4 = (t[3] >> 8) & 0x00f_ffff
        s1 = r1 * 5; s2 = r2 * 5; s3 = r3 * 5; s4 = r4 * 5
        pad = (t[4], t[5], t[6], t[7])
    }

    /// Absorbs `bytes` as consecutive 16-byte blocks, treating a short last block as `trailing` says.
    mutating func absorb(_ bytes: UnsafeRawBufferPointer, trailing: Trailing) {
        var offset = 0
        while offset + 16 <= bytes.count {
            absorbBlock(bytes.baseAddress! + offset, highBit: 1 << 24)
            offset += 16
        }
        let rest = bytes.count - offset
        guard rest > 0 else { return }
        withUnsafeTemporaryAllocation(byteCount: 16, alignment: 8) { block in
            block.initializeMemory(as: UInt8.self, repeating: 0)
            block.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset...]))
            switch trailing {
            case .messageEnd:
                block[rest] = 1
                absorbBlock(UnsafeRawPointer(block.baseAddress!), highBit: 0)
            case .zeroPadded:
                absorbBlock(UnsafeRawPointer(block.baseAddress!), highBit: 1 << 24)
            }
        }
    }

    /// RFC 8439 §2.5: Acc = ((Acc + block) * r) mod (2^130 - 5), with the 2^128 bit given as `highBit` of limb 4.
    private mutating func absorbBlock(_ block: UnsafeRawPointer, highBit: UInt64) {
        let t0 = UInt64(UInt32(littleEndian: block.loadUnaligned(fromByteOffset: 0, as: UInt32.self)))
        let t1 = UInt64(UInt32(littleEndian: block.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
        let t2 = UInt64(UInt32(littleEndian: block.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))
        let t3 = UInt64(UInt32(littleEndian: block.loadUnaligned(fromByteOffset: 12, as: UInt32.self)))
        let mask = Self.mask
        h0 &+= t0 & mask
        h1 &+= ((t0 >> 26) | (t1 << 6)) & mask
        h2 &+= ((t1 >> 20) | (t2 << 12)) & mask
        h3 &+= ((t2 >> 14) | (t3 << 18)) & mask
        h4 &+= (t3 >> 8) | highBit
        // Schoolbook multiply; limbs above 2^130 wrap around times 5 because 2^130 = 5 mod p.
        let d0 = h0 &* r0 &+ h1 &* s4 &+ h2 &* s3 &+ h3 &* s2 &+ h4 &* s1
        var d1 = h0 &* r1 &+ h1 &* r0 &+ h2 &* s4 &+ h3 &* s3 &+ h4 &* s2
        var d2 = h0 &* r2 &+ h1 &* r1 &+ h2 &* r0 &+ h3 &* s4 &+ h4 &* s3
        var d3 = h0 &* r3 &+ h1 &* r2 &+ h2 &* r1 &+ h3 &* r0 &+ h4 &* s4
        var d4 = h0 &* r4 &+ h1 &* r3 &+ h2 &* r2 &+ h3 &* r1 &+ h4 &* r0
        // Partial reduction: carry each limb into the next.
        var carry = d0 >> 26; h0 = d0 & mask
        d1 &+= carry; carry = d1 >> 26; h1 = d1 & mask
        d2 &+= carry; carry = d2 >> 26; h2 = d2 & mask
        d3 &+= carry; carry = d3 >> 26; h3 = d3 & mask
        d4 &+= carry; carry = d4 >> 26; h4 = d4 & mask
        h0 &+= carry &* 5; carry = h0 >> 26; h0 &= mask
        h1 &+= carry
    }

    /// Fully reduces the accumulator modulo 2^130 - 5, adds s, and returns the low 128 bits little-endian.
    mutating func finalize() -> [UInt8] {
        let mask = Self.mask
        var carry = h1 >> 26; h1 &= mask
        h2 &+= carry; carry = h2 >> 26; h2 &= mask
        h3 &+= carry; carry = h3 >> 26; h3 &= mask
        h4 &+= carry; carry = h4 >> 26; h4 &= mask
        h0 &+= carry &* 5; carry = h0 >> 26; h0 &= mask
        h1 &+= carry
        // g = h + 5 - 2^130; if it does not go negative, h >= p and g is the reduced value.
        var g0 = h0 &+ 5; carry = g0 >> 26; g0 &= mask
        var g1 = h1 &+ carry; carry = g1 >> 26; g1 &= mask
        var g2 = h2 &+ carry; carry = g2 >> 26; g2 &= mask
        var g3 = h3 &+ carry; carry = g3 >> 26; g3 &= mask
        var g4 = h4 &+ carry &- (1 << 26)
        let useG = (g4 >> 63) &- 1  // all ones when g4 is non-negative
        g0 &= useG; g1 &= useG; g2 &= useG; g3 &= useG; g4 &= useG
        let useH = ~useG
        h0 = (h0 & useH) | g0; h1 = (h1 & useH) | g1; h2 = (h2 & useH) | g2
        h3 = (h3 & useH) | g3; h4 = (h4 & useH) | g4
        // Repack into four 32-bit words (mod 2^128) and add s with carries.
        let word0 = (h0 | (h1 << 26)) & 0xffff_ffff
        let word1 = ((h1 >> 6) | (h2 << 20)) & 0xffff_ffff
        let word2 = ((h2 >> 12) | (h3 << 14)) & 0xffff_ffff
        let word3 = ((h3 >> 18) | (h4 << 8)) & 0xffff_ffff
        var sum = word0 &+ pad.0
        let out0 = sum & 0xffff_ffff
        sum = word1 &+ pad.1 &+ (sum >> 32)
        let out1 = sum & 0xffff_ffff
        sum = word2 &+ pad.2 &+ (sum >> 32)
        let out2 = sum & 0xffff_ffff
        sum = word3 &+ pad.3 &+ (sum >> 32)
        let out3 = sum & 0xffff_ffff
        var tag = [UInt8]()
        tag.reserveCapacity(16)
        for word in [out0, out1, out2, out3] {
            for shift in stride(from: 0, to: 32, by: 8) { tag.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }
        return tag
    }
}
