/// Splits a message into the padded 64-byte blocks that SHA-1 and SHA-256 compress.
enum MerkleDamgard {
    /// The block size of SHA-1 and SHA-256 in bytes.
    static let blockByteCount = 64

    /// Calls `body` once for every 64-byte block of `message` followed by its padding.
    ///
    /// FIPS 180-4 §5.1.1: append the bit `1`, then zeros until the length is 448 mod 512 bits,
    /// then the message length in bits as a 64-bit big-endian integer. The padding needs one
    /// extra block, or two when fewer than 9 bytes are left in the last one. No block is copied
    /// except the tail, which lives in a stack-sized temporary buffer.
    static func forEachBlock(of message: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Void) {
        let fullBlocks = message.count / blockByteCount
        if let base = message.baseAddress {
            for index in 0..<fullBlocks {
                body(UnsafeRawBufferPointer(start: base + index * blockByteCount, count: blockByteCount))
            }
        }
        let consumed = fullBlocks * blockByteCount
        let rest = message.count - consumed
        withUnsafeTemporaryAllocation(byteCount: 2 * blockByteCount, alignment: 8) { tail in
            tail.initializeMemory(as: UInt8.self, repeating: 0)
            if rest > 0, let base = message.baseAddress {
                tail.copyMemory(from: UnsafeRawBufferPointer(start: base + consumed, count: rest))
            }
            tail[rest] = 0x80
            // FIPS 180-4 §5.1.1: the 64-bit length must fit after the 0x80 byte.
            let tailLength = rest < blockByteCount - 8 ? blockByteCount : 2 * blockByteCount
            let bitLength = UInt64(message.count) &* 8
            for byte in 0..<8 {
                tail[tailLength - 1 - byte] = UInt8(truncatingIfNeeded: bitLength >> (8 * UInt64(byte)))
            }
            let tailBase = UnsafeRawPointer(tail.baseAddress!)
            body(UnsafeRawBufferPointer(start: tailBase, count: blockByteCount))
            if tailLength == 2 * blockByteCount {
                body(UnsafeRawBufferPointer(start: tailBase + blockByteCount, count: blockByteCount))
            }
        }
    }

    /// Runs `body` on the bytes of `data` without copying when the collection is contiguous.
    static func withBytes<Bytes: Collection, Result>(
        of data: Bytes, _ body: (UnsafeRawBufferPointer) -> Result
    ) -> Result where Bytes.Element == UInt8 {
        if let result = data.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) {
            return result
        }
        return Array(data).withUnsafeBytes(body)
    }

    /// Reads the big-endian 32-bit word at word index `index` of a block.
    @inline(__always)
    static func word(_ block: UnsafeRawBufferPointer, _ index: Int) -> UInt32 {
        UInt32(bigEndian: block.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self))
    }

    /// Serializes hash state words as big-endian bytes, the digest form of FIPS 180-4.
    static func digest(_ words: [UInt32]) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(words.count * 4)
        for word in words {
            out.append(UInt8(truncatingIfNeeded: word >> 24))
            out.append(UInt8(truncatingIfNeeded: word >> 16))
            out.append(UInt8(truncatingIfNeeded: word >> 8))
            out.append(UInt8(truncatingIfNeeded: word))
        }
        return out
    }
}
