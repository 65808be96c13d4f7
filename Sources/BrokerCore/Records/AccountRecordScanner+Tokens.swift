import BrokerCrypto

extension AccountRecordScanner {
    /// The ASCII bytes the JSON grammar is made of.
    enum Byte: UInt8 {
        /// `"`, `\`, `/`, `,` and `:`.
        case quote = 0x22
        case backslash = 0x5C
        case slash = 0x2F
        case comma = 0x2C
        case colon = 0x3A
        /// `{` and `}`.
        case openBrace = 0x7B
        case closeBrace = 0x7D
    }

    /// Moves past JSON whitespace (RFC 8259 §2: space, tab, line feed, carriage return).
    mutating func skipSpace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    /// Whether the byte at the cursor is `byte`.
    func peek(_ byte: Byte) -> Bool {
        position < bytes.count && bytes[position] == byte.rawValue
    }

    /// Takes `byte` when it is at the cursor.
    mutating func take(_ byte: Byte) -> Bool {
        guard peek(byte) else { return false }
        position += 1
        return true
    }

    /// Skips whitespace, then takes `byte` when it is there.
    mutating func skipSpaceAndTake(_ byte: Byte) -> Bool {
        skipSpace()
        return take(byte)
    }

    /// Takes the ASCII word `literal` (`null`) when it is at the cursor.
    mutating func take(literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - position >= count else { return false }
        for offset in 0..<count where bytes[position + offset] != literal.utf8Start[offset] { return false }
        position += count
        return true
    }

    /// A non-negative integer without fraction or exponent; nil for anything else, including overflow.
    ///
    /// RFC 8259 §6 forbids leading zeros. A fraction or exponent is valid JSON,
    /// but whether it decodes as an `Int` is left to JSONDecoder.
    mutating func integer() -> Int? {
        let start = position
        var value = 0
        while position < bytes.count, (0x30...0x39).contains(bytes[position]) {
            let (shifted, overflowShift) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowAdd) = shifted.addingReportingOverflow(Int(bytes[position] - 0x30))
            guard !overflowShift, !overflowAdd else { return nil }
            value = sum
            position += 1
        }
        let digits = position - start
        guard digits > 0, digits == 1 || bytes[start] != 0x30 else { return nil }
        if position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return nil
            default: break
            }
        }
        return value
    }

    /// The span of the JSON string at the cursor; nil when it is unterminated or holds a raw control character.
    ///
    /// Escapes are only skipped here; ``text(_:)`` decodes and checks them.
    mutating func textSpan() -> AccountRecordSpans.Text? {
        guard take(.quote) else { return nil }
        let start = position
        var escaped = false
        // Eight bytes at a time up to the first word holding a quote, a backslash or a control character (most of a
        // string: Base64 ciphertexts, dates, ids), then byte by byte from there, as before.
        if let base = bytes.baseAddress {
            let words = UnsafeRawPointer(base)
            while bytes.count - position >= 8, !Self.holdsStringDelimiter(words.loadUnaligned(fromByteOffset: position, as: UInt64.self)) {
                position += 8
            }
        }
        while position < bytes.count {
            switch bytes[position] {
            case Byte.quote.rawValue:
                defer { position += 1 }
                return AccountRecordSpans.Text(range: start..<position, escaped: escaped)
            case Byte.backslash.rawValue:
                escaped = true
                position += 2
            case 0x00..<0x20:
                return nil  // RFC 8259 §7: control characters must be escaped.
            default:
                position += 1
            }
        }
        return nil
    }

    /// Whether any of the eight bytes of `word` is a quote, a backslash or a control character (below 0x20): the bytes
    /// that end or interrupt a run of plain string content in ``textSpan()``.
    ///
    /// Exact, with no carry between bytes: for each byte `x`, `((x & 0x7F) + 0x7F) | x` has its high bit set exactly
    /// when `x` is not zero, and a byte is one of those three exactly when `x ^ 0x22`, `x ^ 0x5C` or `x & 0xE0` is zero.
    @inline(__always)
    static func holdsStringDelimiter(_ word: UInt64) -> Bool {
        let low: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        let high: UInt64 = 0x8080_8080_8080_8080
        func nonZero(_ x: UInt64) -> UInt64 { ((x & low) &+ low) | x }
        let plain = nonZero(word ^ 0x2222_2222_2222_2222) & nonZero(word ^ 0x5C5C_5C5C_5C5C_5C5C) & nonZero(word & 0xE0E0_E0E0_E0E0_E0E0)
        return ~plain & high != 0
    }

    /// The raw bytes of `span`, escapes undecoded.
    func raw(_ span: AccountRecordSpans.Text) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: bytes[span.range])
    }

    /// The string `span` holds, escapes decoded; nil when an escape is malformed or the text is not valid UTF-8.
    func text(_ span: AccountRecordSpans.Text) -> String? {
        let raw = raw(span)
        guard span.escaped else {
            // ASCII needs no validation; `String(decoding:)` is the fast way in.
            return raw.allSatisfy({ $0 < 0x80 }) ? String(decoding: raw, as: UTF8.self) : String(validUTF8: raw)
        }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(raw.count)
        var index = 0
        while index < raw.count {
            let byte = raw[index]
            index += 1
            guard byte == Byte.backslash.rawValue else {
                decoded.append(byte)
                continue
            }
            guard Self.unescape(raw, at: &index, into: &decoded) else { return nil }
        }
        return decoded.withUnsafeBufferPointer { String(validUTF8: $0) }
    }

    /// Decodes the escape after a backslash (RFC 8259 §7) at `index` of `raw` into `decoded`; false when it is malformed.
    private static func unescape(_ raw: UnsafeBufferPointer<UInt8>, at index: inout Int, into decoded: inout [UInt8]) -> Bool {
        guard index < raw.count else { return false }
        let byte = raw[index]
        index += 1
        switch byte {
        case Byte.quote.rawValue, Byte.backslash.rawValue, Byte.slash.rawValue: decoded.append(byte)
        case UInt8(ascii: "b"): decoded.append(0x08)
        case UInt8(ascii: "f"): decoded.append(0x0C)
        case UInt8(ascii: "n"): decoded.append(0x0A)
        case UInt8(ascii: "r"): decoded.append(0x0D)
        case UInt8(ascii: "t"): decoded.append(0x09)
        case UInt8(ascii: "u"):
            guard let unit = hexUnit(raw, at: &index) else { return false }
            var value = UInt32(unit)
            // RFC 8259 §7: a character outside the BMP is a UTF-16 surrogate pair; a lone surrogate is left to JSONDecoder.
            if (0xD800...0xDBFF).contains(unit) {
                guard index + 1 < raw.count, raw[index] == Byte.backslash.rawValue, raw[index + 1] == UInt8(ascii: "u") else {
                    return false
                }
                index += 2
                guard let low = hexUnit(raw, at: &index), (0xDC00...0xDFFF).contains(low) else { return false }
                value = 0x10000 + (UInt32(unit - 0xD800) << 10) + UInt32(low - 0xDC00)
            }
            guard let scalar = Unicode.Scalar(value) else { return false }
            UTF8.encode(scalar) { decoded.append($0) }
        default:
            return false
        }
        return true
    }

    /// Four hex digits at `index` of `raw` as one UTF-16 code unit.
    private static func hexUnit(_ raw: UnsafeBufferPointer<UInt8>, at index: inout Int) -> UInt16? {
        guard raw.count - index >= 4 else { return nil }
        var unit: UInt16 = 0
        for _ in 0..<4 {
            guard let digit = Hex.value(of: raw[index]) else { return nil }
            unit = unit << 4 | UInt16(digit)
            index += 1
        }
        return unit
    }
}
