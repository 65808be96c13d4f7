/// A cursor over the bytes of one `Authorization` header value, for ``OAuth1Signer/parseAuthorizationHeader(_:)``.
struct OAuth1HeaderScanner {
    private let bytes: [UInt8]
    private var index = 0

    /// Starts reading at the first byte of `bytes`.
    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Whether every byte has been read.
    var atEnd: Bool { index == bytes.count }

    /// Skips spaces and tabs; returns whether any were skipped.
    @discardableResult
    mutating func skipWhitespace() -> Bool {
        let start = index
        while index < bytes.count, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") { index += 1 }
        return index > start
    }

    /// Consumes `character` if it is next.
    mutating func skip(_ character: Unicode.Scalar) -> Bool {
        guard index < bytes.count, bytes[index] == UInt8(ascii: character) else { return false }
        index += 1
        return true
    }

    /// Reads up to the next whitespace, `=`, `,` or `"`.
    mutating func readToken() -> String {
        let start = index
        while index < bytes.count, !" \t=,\"".utf8.contains(bytes[index]) { index += 1 }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// Reads a quoted-string (RFC 9110 §5.6.4) and returns its content, or nil if it is missing or unterminated.
    mutating func readQuotedString() -> String? {
        guard skip("\"") else { return nil }
        var content = [UInt8]()
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: content, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { return nil }
                content.append(bytes[index])
                index += 1
            default:
                content.append(byte)
            }
        }
        return nil
    }
}
