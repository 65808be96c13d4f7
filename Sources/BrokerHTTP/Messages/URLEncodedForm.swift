import BrokerCrypto

/// Decoding of `application/x-www-form-urlencoded` queries and form bodies as browsers send them.
///
/// WHATWG URL §5.1: split on `&`, then on the first `=`; `+` is a space; `%XX` is a byte;
/// the bytes are UTF-8 (invalid sequences become U+FFFD). A malformed `%` escape is kept as is:
/// ``PercentEncoding``'s lenient choice.
public enum URLEncodedForm {
    /// All pairs in order, repeats kept, empty segments skipped.
    public static func parse(_ text: String) -> [(name: String, value: String)] {
        PercentEncoding.parseForm(text, .lenient)
    }

    /// The first value for `name`, decoded, without decoding the other pairs' values.
    ///
    /// Walks the query's bytes in place (`GET /account` asks this on every read): a name of plain ASCII, with no
    /// `%` or `+` to decode, is compared byte for byte, which for an ASCII `name` is what comparing the decoded
    /// strings gives; anything else is decoded and compared as strings.
    public static func first(_ name: String, in text: String) -> String? {
        var text = text
        var bytes = name
        return text.withUTF8 { query in bytes.withUTF8 { wanted in first(wanted, name, in: query) } }
    }

    private static func first(_ wanted: UnsafeBufferPointer<UInt8>, _ name: String, in query: UnsafeBufferPointer<UInt8>) -> String? {
        let wantedIsASCII = !wanted.contains { $0 >= 0x80 }
        return firstPair(in: query) { key, value -> String? in
            let matches =
                wantedIsASCII && isPlain(key) ? key.elementsEqual(wanted) : PercentEncoding.formDecodeLeniently(key) == name
            guard matches else { return nil }
            guard let value else { return "" }
            return isPlain(value) ? String(decoding: value, as: UTF8.self) : PercentEncoding.formDecodeLeniently(value)
        }
    }

    /// The first name in the query that is none of `allowed` (decoded), or nil; walks the bytes in place, so a query
    /// of allowed plain names costs one comparison per pair.
    public static func firstUnknownName(in text: String, allowed: [StaticString]) -> String? {
        var text = text
        return text.withUTF8 { query in
            firstPair(in: query) { key, _ -> String? in
                let decoded = isPlain(key) ? nil : PercentEncoding.formDecodeLeniently(key)
                let known = allowed.contains { name in
                    name.withUTF8Buffer { wanted in
                        if let decoded { return decoded.utf8.elementsEqual(wanted) }
                        return key.elementsEqual(wanted)
                    }
                }
                return known ? nil : decoded ?? String(decoding: key, as: UTF8.self)
            }
        }
    }

    /// The first non-nil answer of `body` for the query's non-empty pairs in order: each pair's name bytes and
    /// value bytes (nil when the pair has no `=`), split in place on `&` and the first `=`, nothing decoded.
    @inline(__always)
    private static func firstPair<Result>(
        in query: UnsafeBufferPointer<UInt8>,
        _ body: (_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>?) -> Result?
    ) -> Result? {
        var start = 0
        while start < query.count {
            var end = start
            while end < query.count && query[end] != UInt8(ascii: "&") { end += 1 }
            defer { start = end + 1 }
            guard end > start else { continue }
            var eq = start
            while eq < end && query[eq] != UInt8(ascii: "=") { eq += 1 }
            let value = eq < end ? UnsafeBufferPointer(rebasing: query[(eq + 1)..<end]) : nil
            if let answer = body(UnsafeBufferPointer(rebasing: query[start..<eq]), value) { return answer }
        }
        return nil
    }

    /// Whether form decoding leaves these bytes as they are: ASCII without `%` or `+`.
    private static func isPlain(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        !bytes.contains { $0 >= 0x80 || $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }
    }
}
