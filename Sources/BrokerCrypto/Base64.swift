/// Standard base64 of RFC 4648 §4: `+` and `/`, always padded with `=`.
public enum Base64 {
    /// Encodes `bytes` as padded base64.
    public static func encode(_ bytes: [UInt8]) -> String {
        Base64Codec.standard.encode(bytes, pad: true)
    }

    /// Decodes padded base64, or returns nil for bad characters (including whitespace), missing or misplaced padding, or non-zero pad bits.
    public static func decode(_ text: String) -> [UInt8]? {
        Base64Codec.standard.decode(text, padding: .required)
    }
}
