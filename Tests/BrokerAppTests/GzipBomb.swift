/// A gzip member whose body inflates to many zero bytes: a small answer that decodes to a large one.
///
/// RFC 1951 §3.2.6: one fixed-Huffman block holding a literal zero and then
/// back-references of length 258 at distance 1, 13 bits for each 258 bytes.
/// RFC 1952 §2.3 wraps it in a gzip header and a trailer with the CRC-32 and size,
/// so a decoder that reads it to the end finds it valid.
enum GzipBomb {
    /// The gzip bytes of `zeroBytes` zeros (at least 1).
    static func make(zeroBytes: Int) -> [UInt8] {
        precondition(zeroBytes >= 1)
        var bits = BitWriter()
        bits.write(1, count: 1)  // BFINAL
        bits.write(1, count: 2)  // BTYPE 01: fixed Huffman codes
        bits.writeCode(0x30, length: 8)  // literal 0
        var remaining = zeroBytes - 1
        while remaining >= 258 {
            bits.writeCode(0xC5, length: 8)  // length code 285: 258 bytes, no extra bits
            bits.writeCode(0, length: 5)  // distance code 0: distance 1
            remaining -= 258
        }
        for _ in 0..<remaining { bits.writeCode(0x30, length: 8) }
        bits.writeCode(0, length: 7)  // end of block (256)
        var member: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF]
        member += bits.bytes
        member += littleEndian(crc32OfZeros(zeroBytes))
        member += littleEndian(UInt32(truncatingIfNeeded: zeroBytes))
        return member
    }

    /// RFC 1952 §8's CRC-32 of `count` zero bytes.
    private static func crc32OfZeros(_ count: Int) -> UInt32 {
        var table = [UInt32](repeating: 0, count: 256)
        for index in 0..<256 {
            var value = UInt32(index)
            for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
            table[index] = value
        }
        var crc: UInt32 = 0xFFFF_FFFF
        for _ in 0..<count { crc = table[Int(crc & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }

    private static func littleEndian(_ value: UInt32) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    /// Packs bits least significant first, as RFC 1951 §3.1.1 orders them.
    private struct BitWriter {
        var bytes: [UInt8] = []
        private var used = 0

        /// Writes the low `count` bits of `value`, least significant first (header fields and extra bits).
        mutating func write(_ value: Int, count: Int) {
            for bit in 0..<count { append((value >> bit) & 1) }
        }

        /// Writes a Huffman code most significant bit first, as RFC 1951 §3.1.1 requires.
        mutating func writeCode(_ code: Int, length: Int) {
            for bit in stride(from: length - 1, through: 0, by: -1) { append((code >> bit) & 1) }
        }

        private mutating func append(_ bit: Int) {
            if used == 0 { bytes.append(0) }
            bytes[bytes.count - 1] |= UInt8(bit) << used
            used = (used + 1) % 8
        }
    }
}
