/// Percent-encoding, the one implementation: encoding as RFC 3986 §2.3 and OAuth 1.0a (RFC 5849 §3.6)
/// want it, and `application/x-www-form-urlencoded` decoding in two named choices.
///
/// ``Decoding/strict`` refuses a malformed `%` escape or invalid UTF-8 (provider answers, where a
/// damaged value must not become a different one); ``Decoding/lenient`` keeps a malformed escape
/// as it is and replaces invalid UTF-8 with U+FFFD, as WHATWG URL §5.1 does for a browser's query.
public enum PercentEncoding {
    /// How strictly ``parseForm(_:_:)`` decodes.
    public enum Decoding: Sendable {
        /// A pair whose name or value has a malformed escape or invalid UTF-8 is dropped.
        case strict
        /// Malformed escapes are kept as written; invalid UTF-8 becomes U+FFFD.
        case lenient
    }

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
                // RFC 3986 §2.1: uppercase hex digits.
                out.append(Hex.digit(byte >> 4, uppercase: true))
                out.append(Hex.digit(byte, uppercase: true))
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

    /// Encodes pairs as `a=b&c=d`, each name and value with ``rfc3986(_:)``.
    public static func encodeForm(_ pairs: [(String, String)]) -> String {
        pairs.map { rfc3986($0.0) + "=" + rfc3986($0.1) }.joined(separator: "&")
    }

    /// Decodes one name or value leniently: `+` is a space, a valid `%XX` a byte, anything else kept as written.
    @inlinable
    public static func formDecodeLeniently<S: Collection>(_ bytes: S) -> String where S.Element == UInt8 {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = bytes.startIndex
        while i != bytes.endIndex {
            let b = bytes[i]
            if b == UInt8(ascii: "+") {
                out.append(0x20)
            } else if b == UInt8(ascii: "%"),
                let h = bytes.index(i, offsetBy: 1, limitedBy: bytes.endIndex), h != bytes.endIndex,
                let l = bytes.index(h, offsetBy: 1, limitedBy: bytes.endIndex), l != bytes.endIndex,
                let hi = Hex.value(of: bytes[h]), let lo = Hex.value(of: bytes[l])
            {
                out.append(hi << 4 | lo)
                i = l
            } else {
                out.append(b)
            }
            i = bytes.index(after: i)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Splits a form body or query such as `a=b&c=d` into decoded pairs, keeping order and repeats.
    ///
    /// Empty pairs (`a=1&&b=2`) are skipped, a pair without `=` has an empty value, and only the
    /// first `=` separates name from value. Strictly, a pair whose name or value does not decode is dropped.
    public static func parseForm(_ s: String, _ decoding: Decoding = .strict) -> [(name: String, value: String)] {
        if decoding == .lenient {
            var pairs: [(name: String, value: String)] = []
            for segment in s.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
                if let eq = segment.firstIndex(of: UInt8(ascii: "=")) {
                    pairs.append((formDecodeLeniently(segment[..<eq]), formDecodeLeniently(segment[segment.index(after: eq)...])))
                } else {
                    pairs.append((formDecodeLeniently(segment), ""))
                }
            }
            return pairs
        }
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
    public static func percentDecode(_ s: String, plusIsSpace: Bool) -> String? {
        let input = Array(s.utf8)
        var bytes = [UInt8]()
        bytes.reserveCapacity(input.count)
        var index = 0
        while index < input.count {
            let byte = input[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < input.count,
                    let high = Hex.value(of: input[index + 1]), let low = Hex.value(of: input[index + 2])
                else { return nil }
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
}
