/// URL-safe base64 of RFC 4648 §5: `-` and `_`, written without padding, as PKCE and JWT use it.
public enum Base64URL {
    /// Encodes `bytes` as base64url without `=` padding (RFC 4648 §3.2, RFC 7636 Appendix A).
    public static func encode(_ bytes: [UInt8]) -> String {
        Base64Codec.url.encode(bytes, pad: false)
    }

    /// Decodes base64url with or without padding, or returns nil for bad characters, wrong padding, an impossible length or non-zero pad bits.
    public static func decode(_ text: String) -> [UInt8]? {
        Base64Codec.url.decode(text, padding: .optional)
    }

    /// Decodes base64url given as ASCII bytes (a slice of a file, say), with the rules of ``decode(_:)``.
    public static func decode(utf8 symbols: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        Base64Codec.url.decode(symbols: symbols, padding: .optional)
    }

    /// How many bytes ``decode(utf8:)`` would give for `symbols`, found without decoding them; nil where it would give nil.
    public static func decodedCount(utf8 symbols: UnsafeBufferPointer<UInt8>) -> Int? {
        Base64Codec.url.decodedCount(symbols: symbols, padding: .optional)
    }

    /// Whether every byte of `text` is in the base64url alphabet (`A–Z a–z 0–9 - _`, no padding), and there are
    /// `count` of them: for checking a random token (a flow `state`) before it is looked up.
    public static func isAlphabet(_ text: String, count: ClosedRange<Int>) -> Bool {
        count.contains(text.utf8.count)
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                    return true
                default:
                    return false
                }
            }
    }
}
