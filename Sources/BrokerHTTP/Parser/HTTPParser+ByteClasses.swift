/// Byte constants and character classes of RFC 9110 / RFC 9112, as branch-light bit tests.
extension HTTPParser {
    /// The bytes as the scanners see them.
    typealias Bytes = UnsafeBufferPointer<UInt8>

    /// Carriage return.
    static let cr: UInt8 = 0x0D
    /// Line feed.
    static let lf: UInt8 = 0x0A
    /// Space.
    static let sp: UInt8 = 0x20
    /// Horizontal tab.
    static let htab: UInt8 = 0x09
    /// ":" between a field name and its value.
    static let colon: UInt8 = 0x3A
    /// ";" before a chunk extension or transfer parameter.
    static let semicolon: UInt8 = 0x3B
    /// "," between list elements.
    static let comma: UInt8 = 0x2C
    /// "=" between a chunk extension name and its value.
    static let equals: UInt8 = 0x3D
    /// The double quote around a quoted-string.
    static let quote: UInt8 = 0x22
    /// The backslash of a quoted-pair.
    static let backslash: UInt8 = 0x5C

    /// Longest method accepted before answering 501 without buffering more.
    static let maxMethodBytes = 32
    /// How many empty lines before a request line are ignored (RFC 9112 §2.2).
    static let maxLeadingEmptyLines = 8

    /// RFC 9110 §5.6.2: tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." /
    /// "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA.
    @inline(__always)
    static func isTokenByte(_ c: UInt8) -> Bool {
        if c < 64 { return (0x03FF_6CFA_0000_0000 as UInt64) >> c & 1 == 1 }
        if c < 128 { return (0x57FF_FFFF_C7FF_FFFE as UInt64) >> (c &- 64) & 1 == 1 }
        return false
    }

    /// RFC 3986 §3.2.2 reg-name bytes: unreserved and sub-delims, without "," (a list in Host is invalid).
    @inline(__always)
    static func isRegNameByte(_ c: UInt8) -> Bool {
        if c < 64 { return (0x2BFF_6FD2_0000_0000 as UInt64) >> c & 1 == 1 }
        if c < 128 { return (0x47FF_FFFE_87FF_FFFE as UInt64) >> (c &- 64) & 1 == 1 }
        return false
    }

    /// A request-target byte: visible ASCII; controls, SP, DEL and non-ASCII are rejected.
    @inline(__always)
    static func isTargetByte(_ c: UInt8) -> Bool {
        c &- 0x21 < 0x5E
    }

    /// RFC 9110 §5.5: field-vchar (VCHAR / obs-text), SP or HTAB inside a field value.
    @inline(__always)
    static func isFieldValueByte(_ c: UInt8) -> Bool {
        c > 0x20 ? c != 0x7F : (c == sp || c == htab)
    }

    /// Whether every byte of `b[start..<end]` may appear in a field value, checked eight bytes at a time.
    @inline(__always)
    static func isFieldValue(_ b: Bytes, _ start: Int, _ end: Int) -> Bool {
        guard let base = b.baseAddress else { return start == end }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        var i = start
        while i < end {
            if end - i >= 8 {
                // A word with no byte below 0x20 and no DEL is all field-vchar or SP (Hacker's Delight "hasless").
                let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                let below20 = (word &- ones &* 0x20) & ~word & highs
                let del = word ^ (ones &* 0x7F)
                if (below20 | ((del &- ones) & ~del & highs)) == 0 {
                    i += 8
                    continue
                }
            }
            guard isFieldValueByte(b[i]) else { return false }
            i += 1
        }
        return true
    }

    /// Whether `b[at..<at+literal.count]` equals `literal` exactly.
    @inline(__always)
    static func matches(_ b: Bytes, at start: Int, _ literal: StaticString) -> Bool {
        let p = literal.utf8Start
        for k in 0..<literal.utf8CodeUnitCount where b[start + k] != p[k] { return false }
        return true
    }

    /// Whether `b[at..<at+literal.count]` equals the lowercase ASCII `literal`, ignoring case.
    ///
    /// Only sound on token or field-value bytes: OR-ing 0x20 maps no such byte onto a
    /// letter, digit or "-" except the same character in the other case.
    @inline(__always)
    static func matchesLowercase(_ b: Bytes, at start: Int, _ literal: StaticString) -> Bool {
        let p = literal.utf8Start
        for k in 0..<literal.utf8CodeUnitCount where b[start + k] | 0x20 != p[k] { return false }
        return true
    }

    /// The bytes `b[start..<end]` as a String; invalid UTF-8 (obs-text) is repaired to U+FFFD.
    @inline(__always)
    static func string(_ b: Bytes, _ start: Int, _ end: Int) -> String {
        String(decoding: Bytes(rebasing: b[start..<end]), as: UTF8.self)
    }

    /// ``string(_:_:_:)`` for bytes a byte class has already found ASCII (a field name's token bytes, a target's
    /// visible ASCII): up to 15 bytes, the small (inline) string is filled without `String(decoding:)`'s UTF-8 check,
    /// which costs a few instructions a byte. A longer string is decoded as before (the other initialiser checks its
    /// bytes too, and costs more there).
    @inline(__always)
    static func asciiString(_ b: Bytes, _ start: Int, _ end: Int) -> String {
        guard end - start <= 15 else { return string(b, start, end) }
        return String(unsafeUninitializedCapacity: end - start) { $0.initialize(fromContentsOf: Bytes(rebasing: b[start..<end])) }
    }
}
