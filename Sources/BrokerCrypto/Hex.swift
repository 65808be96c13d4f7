/// Base16 (RFC 4648 §8): the one implementation of hex digits, written in lowercase unless asked for uppercase.
///
/// Percent-encoding (RFC 3986 §2.1, uppercase), JSON `\u` escapes, file
/// names, chunk sizes and digests all read and write their hex digits here.
public enum Hex {
    @usableFromInline static let lowercaseDigits: [UInt8] = Array("0123456789abcdef".utf8)
    @usableFromInline static let uppercaseDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// Encodes `bytes` as hexadecimal, two digits per byte, lowercase unless `uppercase`.
    public static func encode(_ bytes: [UInt8], uppercase: Bool = false) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digit(byte >> 4, uppercase: uppercase))
            out.append(digit(byte & 0x0F, uppercase: uppercase))
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes hexadecimal in either case, or returns nil for an odd length or a non-hex character.
    public static func decode(_ text: String) -> [UInt8]? {
        let symbols = Array(text.utf8)
        guard symbols.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(symbols.count / 2)
        var index = 0
        while index < symbols.count {
            guard let high = value(of: symbols[index]), let low = value(of: symbols[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    /// The ASCII digit of `nibble` (its low four bits), lowercase unless `uppercase`.
    @inlinable
    public static func digit(_ nibble: UInt8, uppercase: Bool = false) -> UInt8 {
        (uppercase ? uppercaseDigits : lowercaseDigits)[Int(nibble & 0x0F)]
    }

    /// The value of one hex digit in either case, or nil for any other byte.
    @inlinable
    public static func value(of symbol: UInt8) -> UInt8? {
        switch symbol {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): symbol &- UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): symbol &- UInt8(ascii: "a") &+ 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): symbol &- UInt8(ascii: "A") &+ 10
        default: nil
        }
    }
}
