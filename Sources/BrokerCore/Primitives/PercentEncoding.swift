/// Percent-encoding as OAuth 1.0a signs it (RFC 5849 §3.6) and form decoding as providers answer.
public enum PercentEncoding {
    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// Encodes `s` for OAuth 1.0a: UTF-8 first, unreserved `A-Z a-z 0-9 - . _ ~` kept, every other byte as `%XX`.
    ///
    /// RFC 5849 §3.6: hex digits are uppercase and a space is `%20`, never `+`; `*` is encoded and `~` is not,
    /// unlike `application/x-www-form-urlencoded` encoders.
    public static func rfc3986(_ s: String) -> String {
        var out = [UInt8]()
        out.reserveCapacity(s.utf8.count)
        for byte in s.utf8 {
            if isUnreserved(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes one `application/x-www-form-urlencoded` name or value: `+` is a space, `%XX` a byte, the result UTF-8.
    ///
    /// Returns nil when a `%` is not followed by two hex digits or the bytes are not valid UTF-8.
    public static func formDecode(_ s: String) -> String? {
        percentDecode(s, plusIsSpace: true)
    }

    /// Splits a form body or query such as `a=b&c=d` into decoded pairs, keeping order and repeats.
    ///
    /// Empty pairs (`a=1&&b=2`) are skipped, a pair without `=` has an empty value, and only the
    /// first `=` separates name from value. A pair whose name or value does not decode is dropped.
    public static func parseForm(_ s: String) -> [(name: String, value: String)] {
        var pairs: [(name: String, value: String)] = []
        for pair in s.split(separator: "&", omittingEmptySubsequences: true) {
            let name: Substring, value: Substring
            if let equals = pair.firstIndex(of: "=") {
                name = pair[..<equals]
                value = pair[pair.index(after: equals)...]
            } else {
                name = pair
                value = ""
            }
            guard let decodedName = formDecode(String(name)), let decodedValue = formDecode(String(value)) else { continue }
            pairs.append((decodedName, decodedValue))
        }
        return pairs
    }

    /// Decodes `%XX` escapes (either hex case); `+` becomes a space only when `plusIsSpace` is true.
    static func percentDecode(_ s: String, plusIsSpace: Bool) -> String? {
        let input = Array(s.utf8)
        var bytes = [UInt8]()
        bytes.reserveCapacity(input.count)
        var index = 0
        while index < input.count {
            let byte = input[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < input.count,
                      let high = hexValue(input[index + 1]), let low = hexValue(input[index + 2]) else { return nil }
                bytes.append(high << 4 | low)
                index += 3
            } else {
                bytes.append(plusIsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index += 1
            }
        }
        let text = String(decoding: bytes, as: UTF8.self)
        // Invalid UTF-8 was replaced by U+FFFD, which changes the bytes.
        guard text.utf8.elementsEqual(bytes) else { return nil }
        return text
    }

    /// RFC 3986 §2.3: ALPHA / DIGIT / "-" / "." / "_" / "~".
    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// Returns the value of one hex digit in either case, or nil.
    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
