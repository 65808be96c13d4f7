import BrokerCrypto

/// A response a handler returns: status, header fields and a complete body.
///
/// The server adds `Date`, `Content-Length` and `Connection`; a HEAD request gets
/// the same fields without the body (RFC 9110 §9.3.2).
public struct Response: Sendable {
    /// The status line's code and reason.
    public var status: HTTPStatus
    /// Header fields other than those the server adds.
    public var headers: HTTPHeaders {
        didSet { encodedHeaders = nil }
    }
    /// ``headers`` as the head writes them, for a response made from ``FixedHeaders``; nil once they change.
    private(set) var encodedHeaders: [UInt8]?
    /// The body bytes.
    public var body: [UInt8]
    /// A body produced piece by piece instead of `body` (which is then ignored): sent with `Content-Length` when
    /// its length is known, chunked otherwise (RFC 9112 §7.1), or delimited by closing the connection for an
    /// HTTP/1.0 client (RFC 9112 §6.3).
    public var stream: ResponseStream? {
        get { streamBox?.stream }
        set { streamBox = newValue.map(StreamBox.init) }
    }
    /// ``stream``, held by reference. Held in place, an optional ``ResponseStream`` (two closures and a length) made
    /// every initialiser build the response twice, copy it and destroy the copy (the optimiser's outlined copy and
    /// destroy of `Response`, about 260 instructions per answer); a reference keeps the initialisers a few stores and
    /// the response 40 bytes smaller.
    private var streamBox: StreamBox?

    /// A ``ResponseStream`` as one reference.
    private final class StreamBox: Sendable {
        let stream: ResponseStream
        init(_ stream: ResponseStream) { self.stream = stream }
    }

    /// Creates a response.
    public init(status: HTTPStatus, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [], stream: ResponseStream? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.streamBox = stream.map(StreamBox.init)
    }

    /// A response whose fields are `fixed`'s, written out once: its head copies their bytes in one piece.
    public init(status: HTTPStatus, fixed: FixedHeaders, body: [UInt8]) {
        self.status = status
        self.headers = fixed.headers
        self.encodedHeaders = fixed.encoded
        self.body = body
        self.streamBox = nil
    }

    /// A response whose body is already-serialised JSON.
    public static func json(_ status: HTTPStatus, _ json: String, headers: HTTPHeaders = HTTPHeaders()) -> Response {
        var headers = headers
        headers.add(name: "Content-Type", value: "application/json")
        return Response(status: status, headers: headers, body: Array(json.utf8))
    }
}

/// Header fields many responses share (a route's fixed fields), written out once as a response's head writes them,
/// so that each response copies those bytes instead of writing every name and value again
/// (``Response/init(status:fixed:body:)``). A response whose ``Response/headers`` are then changed is written field by
/// field, as any other.
public struct FixedHeaders: Sendable {
    /// The fields.
    public let headers: HTTPHeaders
    /// The fields as ``ResponseEncoder`` writes them: `CRLF name: value` each.
    let encoded: [UInt8]

    /// The fields given, in order.
    public init(_ fields: [(name: String, value: String)]) {
        headers = HTTPHeaders(fields)
        var head = ByteWriter(capacity: 256)
        ResponseEncoder.append(fields: fields, into: &head)
        encoded = head.bytes
    }
}

/// Minimal JSON string quoting (RFC 8259 §7) for bodies the transport writes itself.
public enum JSONString {
    /// Returns `s` as a JSON string literal, quotes included.
    public static func quote(_ s: String) -> String {
        if !needsEscaping(s) { return "\"" + s + "\"" }
        var out = "\""
        out.reserveCapacity(s.utf8.count + 2)
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let c where c.value < 0x20 || c.value == 0x7F:
                out += "\\u00" + Hex.encode([UInt8(c.value)])
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
        return out
    }

    /// Appends `s` as a JSON string literal (quotes included) to `out` as UTF-8.
    ///
    /// Scanned and copied through the string's contiguous UTF-8 (`/account` writes a dozen of these per read): iterating
    /// `String.UTF8View` byte by byte cost more than the rest of the body together.
    public static func appendQuoted(_ s: String, to out: inout [UInt8]) {
        var s = s
        let plain = s.withUTF8 { utf8 -> Bool in
            guard !needsEscaping(utf8) else { return false }
            out.append(0x22)
            out.append(contentsOf: utf8)
            out.append(0x22)
            return true
        }
        if !plain { out.append(contentsOf: quote(s).utf8) }
    }

    /// Appends `s` as a JSON string literal (quotes included) to `out`.
    public static func appendQuoted(_ s: String, to out: inout ByteWriter) {
        var s = s
        let plain = s.withUTF8 { utf8 -> Bool in
            guard !needsEscaping(utf8) else { return false }
            out.append(quoting: utf8)
            return true
        }
        if !plain { out.append(string: quote(s)) }
    }

    /// Appends `s` escaped as `appendQuoted` escapes it, without the quotes: for a string literal written in parts.
    public static func appendEscaped(_ s: String, to out: inout ByteWriter) {
        var s = s
        let plain = s.withUTF8 { utf8 -> Bool in
            guard !needsEscaping(utf8) else { return false }
            out.append(utf8)
            return true
        }
        guard !plain else { return }
        var quoted = quote(s)
        quoted.withUTF8 { out.append(UnsafeBufferPointer(rebasing: $0.dropFirst().dropLast())) }
    }

    /// Whether any byte needs an escape (quote, backslash, control character, DEL).
    static func needsEscaping(_ s: String) -> Bool {
        var s = s
        return s.withUTF8(needsEscaping)
    }

    /// ``needsEscaping(_:)`` on UTF-8 bytes.
    ///
    /// Eight bytes at a time (a token answer is a few hundred bytes of strings), then the rest byte by byte.
    static func needsEscaping(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        if let base = utf8.baseAddress {
            let ones: UInt64 = 0x0101_0101_0101_0101
            let highs: UInt64 = 0x8080_8080_8080_8080
            // Hacker's Delight: a word has a zero byte, or a byte below n (n <= 128), exactly when these are non-zero.
            func hasZero(_ v: UInt64) -> Bool { (v &- ones) & ~v & highs != 0 }
            while i + 8 <= utf8.count {
                let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                if (word &- ones &* 0x20) & ~word & highs != 0 || hasZero(word ^ (ones &* 0x22))
                    || hasZero(word ^ (ones &* 0x5C)) || hasZero(word ^ (ones &* 0x7F))
                {
                    return true
                }
                i += 8
            }
        }
        while i < utf8.count {
            let byte = utf8[i]
            if byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F { return true }
            i += 1
        }
        return false
    }
}
