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
    public static func first(_ name: String, in text: String) -> String? {
        for segment in text.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let eq = segment.firstIndex(of: UInt8(ascii: "=")) ?? segment.endIndex
            if PercentEncoding.formDecodeLeniently(segment[..<eq]) == name {
                return eq == segment.endIndex ? "" : PercentEncoding.formDecodeLeniently(segment[segment.index(after: eq)...])
            }
        }
        return nil
    }
}
