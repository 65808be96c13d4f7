/// Base16 (RFC 4648 §8), written in lowercase.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Encodes `bytes` as lowercase hexadecimal, two digits per byte.
    public static func encode(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
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

    /// Returns the value of one hex digit, or nil.
    private static func value(of symbol: UInt8) -> UInt8? {
        switch symbol {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): symbol - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): symbol - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): symbol - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
