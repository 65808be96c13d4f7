/// Decoding of `application/x-www-form-urlencoded` data, used for queries and form bodies.
///
/// WHATWG URL §5.1: split on `&`, then on the first `=`; `+` is a space; `%XX` is a byte;
/// the bytes are UTF-8 (invalid sequences become U+FFFD). A malformed `%` escape is kept as is.
public enum URLEncodedForm {
    /// All pairs in order, repeats kept, empty segments skipped.
    public static func parse(_ text: String) -> [(name: String, value: String)] {
        var pairs: [(String, String)] = []
        for segment in text.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            if let eq = segment.firstIndex(of: UInt8(ascii: "=")) {
                pairs.append((decode(segment[..<eq]), decode(segment[segment.index(after: eq)...])))
            } else {
                pairs.append((decode(segment), ""))
            }
        }
        return pairs
    }

    /// The first value for `name`, decoded, without decoding the other pairs' values.
    public static func first(_ name: String, in text: String) -> String? {
        for segment in text.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let eq = segment.firstIndex(of: UInt8(ascii: "=")) ?? segment.endIndex
            if decode(segment[..<eq]) == name {
                return eq == segment.endIndex ? "" : decode(segment[segment.index(after: eq)...])
            }
        }
        return nil
    }

    /// Decodes one name or value.
    public static func decode<S: Collection>(_ bytes: S) -> String where S.Element == UInt8 {
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
                      let hi = hexValue(bytes[h]), let lo = hexValue(bytes[l]) {
                out.append(hi << 4 | lo)
                i = l
            } else {
                out.append(b)
            }
            i = bytes.index(after: i)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Encodes a name or value for a query or form body (space as `%20`, unreserved kept).
    public static func encode(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        let hex: [Character] = Array("0123456789ABCDEF")
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(Character(UnicodeScalar(b)))
            default:
                out.append("%")
                out.append(hex[Int(b >> 4)])
                out.append(hex[Int(b & 0x0F)])
            }
        }
        return out
    }

    /// Encodes pairs as `a=b&c=d`.
    public static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { encode($0.0) + "=" + encode($0.1) }.joined(separator: "&")
    }

    static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return b - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
