/// The shared engine of the base64 and base64url encodings of RFC 4648, parameterized by alphabet.
struct Base64Codec: Sendable {
    /// How the decoder treats the `=` padding of RFC 4648 §3.2.
    enum Padding: Sendable {
        /// Input length must be a multiple of four, padded with `=` as needed.
        case required
        /// Input may be padded correctly or carry no padding at all.
        case optional
    }

    /// The 64 symbols, index 0 to 63, as ASCII bytes.
    let alphabet: [UInt8]
    /// Maps an ASCII byte to its 6-bit value, or 0xFF when the byte is not in the alphabet.
    let reverse: [UInt8]

    /// Creates a codec whose last two symbols are `symbol62` and `symbol63`.
    init(symbol62: UInt8, symbol63: UInt8) {
        var alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
        alphabet += [symbol62, symbol63]
        var reverse = [UInt8](repeating: 0xFF, count: 256)
        for (value, symbol) in alphabet.enumerated() { reverse[Int(symbol)] = UInt8(value) }
        self.alphabet = alphabet
        self.reverse = reverse
    }

    /// RFC 4648 §4: the standard alphabet, `+` and `/`.
    static let standard = Base64Codec(symbol62: UInt8(ascii: "+"), symbol63: UInt8(ascii: "/"))
    /// RFC 4648 §5: the URL- and filename-safe alphabet, `-` and `_`.
    static let url = Base64Codec(symbol62: UInt8(ascii: "-"), symbol63: UInt8(ascii: "_"))

    /// Encodes `bytes`, appending `=` padding when `pad` is true (RFC 4648 §4, §3.2).
    func encode(_ bytes: [UInt8], pad: Bool) -> String {
        var out = [UInt8]()
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= bytes.count {
            let group = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            out.append(alphabet[Int(group >> 18)])
            out.append(alphabet[Int(group >> 12 & 0x3F)])
            out.append(alphabet[Int(group >> 6 & 0x3F)])
            out.append(alphabet[Int(group & 0x3F)])
            index += 3
        }
        let remaining = bytes.count - index
        if remaining > 0 {
            // RFC 4648 §4: a final quantum of 8 or 16 bits gives 2 or 3 symbols, zero-filled.
            let second = remaining == 2 ? UInt32(bytes[index + 1]) : 0
            let group = UInt32(bytes[index]) << 16 | second << 8
            out.append(alphabet[Int(group >> 18)])
            out.append(alphabet[Int(group >> 12 & 0x3F)])
            if remaining == 2 { out.append(alphabet[Int(group >> 6 & 0x3F)]) }
            if pad { out += [UInt8](repeating: UInt8(ascii: "="), count: 3 - remaining) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes `text`, or returns nil for any symbol outside the alphabet, misplaced or wrong
    /// padding, an impossible length, or non-zero pad bits (RFC 4648 §3.3, §3.5).
    func decode(_ text: String, padding: Padding) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decode(symbols: $0, padding: padding) }
    }

    /// How many bytes the ASCII `symbols` decode to, checked with every rule of ``decode(_:padding:)`` but
    /// without writing them anywhere; nil where decoding would fail.
    func decodedCount(symbols: UnsafeBufferPointer<UInt8>, padding: Padding) -> Int? {
        guard let (count, remainder) = layout(symbols, padding: padding) else { return nil }
        var last: UInt8 = 0
        for position in 0..<count {
            last = reverse[Int(symbols[position])]
            guard last != 0xFF else { return nil }
        }
        // RFC 4648 §3.5: the pad bits of the last symbol are zero (4 of them after 2 symbols, 2 after 3).
        if remainder == 2 { guard last & 0x0F == 0 else { return nil } }
        if remainder == 3 { guard last & 0x03 == 0 else { return nil } }
        return count / 4 * 3 + (remainder == 0 ? 0 : remainder - 1)
    }

    /// How many of `symbols` are data (the trailing `=` cut off) and how many of those are left after whole groups of
    /// four; nil when the padding breaks a rule of ``decode(_:padding:)`` or a single symbol is left over.
    private func layout(_ symbols: UnsafeBufferPointer<UInt8>, padding: Padding) -> (count: Int, remainder: Int)? {
        var count = symbols.count
        var padCount = 0
        while padCount < 2, count > 0, symbols[count - 1] == UInt8(ascii: "=") {
            count -= 1
            padCount += 1
        }
        // RFC 4648 §3.2: with padding the encoded length is a multiple of 4.
        if padCount > 0 || padding == .required {
            guard (count + padCount) % 4 == 0 else { return nil }
        }
        let remainder = count % 4
        guard remainder != 1 else { return nil }
        if padCount > 0 { guard padCount == 4 - remainder else { return nil } }
        return (count, remainder)
    }

    /// Decodes the ASCII `symbols`, with the rules of ``decode(_:padding:)``.
    func decode(symbols: UnsafeBufferPointer<UInt8>, padding: Padding) -> [UInt8]? {
        guard let (count, remainder) = layout(symbols, padding: padding) else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(count / 4 * 3 + 2)
        var group: UInt32 = 0
        for position in 0..<count {
            let value = reverse[Int(symbols[position])]
            guard value != 0xFF else { return nil }
            group = group << 6 | UInt32(value)
            if position % 4 == 3 {
                out.append(UInt8(truncatingIfNeeded: group >> 16))
                out.append(UInt8(truncatingIfNeeded: group >> 8))
                out.append(UInt8(truncatingIfNeeded: group))
                group = 0
            }
        }
        switch remainder {
        case 2:
            // 12 bits carry one byte; the low 4 must be zero (RFC 4648 §3.5, canonical encoding).
            guard group & 0x0F == 0 else { return nil }
            out.append(UInt8(truncatingIfNeeded: group >> 4))
        case 3:
            // 18 bits carry two bytes; the low 2 must be zero.
            guard group & 0x03 == 0 else { return nil }
            out.append(UInt8(truncatingIfNeeded: group >> 10))
            out.append(UInt8(truncatingIfNeeded: group >> 2))
        default:
            break
        }
        return out
    }
}
