/// Serialises responses onto the wire (RFC 9112 §4, §6), appending to a byte buffer.
enum ResponseEncoder {
    /// How a streamed body is framed on the wire.
    enum StreamFraming: Equatable {
        /// `Content-Length` of the stream's announced length.
        case length(Int)
        /// `Transfer-Encoding: chunked` (RFC 9112 §7.1).
        case chunked
        /// Neither: the body ends when the connection closes (RFC 9112 §6.3, for an HTTP/1.0 client).
        case closeDelimited
    }

    /// Appends one response.
    ///
    /// - Parameters:
    ///   - includeBody: false for HEAD, where `Content-Length` still gives the GET length.
    ///   - close: adds `Connection: close`; the caller closes after writing.
    ///   - keepAliveHTTP10: adds `Connection: keep-alive` for an HTTP/1.0 client that asked for it.
    ///   - requestID: the `X-Request-Id` field value, already checked to be printable ASCII.
    ///   - date: the `Date` field value (RFC 9110 §6.6.1), by default the current second.
    ///   - streamFraming: for a streamed response, its framing; the head alone is appended, the pieces follow.
    static func encode(
        _ response: Response, includeBody: Bool, close: Bool, keepAliveHTTP10: Bool, requestID: String? = nil,
        date: [UInt8] = HTTPDateCache.shared.current(), streamFraming: StreamFraming? = nil, into out: inout [UInt8]
    ) {
        // The head is gathered in a ByteWriter and appended to `out` once: a dozen or more pieces per response,
        // each a generic `[UInt8]` append before.
        var head = ByteWriter(capacity: 256)
        head.append("HTTP/1.1 ")
        appendDecimal(response.status.code, into: &head)
        head.append(0x20)
        head.append(string: response.status.reason)
        head.append("\r\nDate: ")
        head.append(date)
        let status = response.status.code
        // RFC 9110 §8.6: no Content-Length in 1xx and 204 responses.
        if status != 204 && status >= 200 {
            switch streamFraming {
            case nil:
                head.append("\r\nContent-Length: ")
                appendDecimal(response.body.count, into: &head)
            case .length(let length):
                head.append("\r\nContent-Length: ")
                appendDecimal(length, into: &head)
            case .chunked:
                head.append("\r\nTransfer-Encoding: chunked")
            case .closeDelimited:
                break
            }
        }
        if close {
            head.append("\r\nConnection: close")
        } else if keepAliveHTTP10 {
            head.append("\r\nConnection: keep-alive")
        }
        if let requestID {
            head.append("\r\nX-Request-Id: ")
            head.append(string: requestID)
        }
        if let encoded = response.encodedHeaders {
            head.append(encoded)
        } else {
            append(fields: response.headers.fields, into: &head)
        }
        head.append("\r\n\r\n")
        head.withBytes { out.append(contentsOf: $0) }
        if includeBody && status != 204 && status != 304 && streamFraming == nil {
            out.append(contentsOf: response.body)
        }
    }

    /// Appends header fields to a response's head, each as `CRLF name: value` (RFC 9112 §5).
    @inline(__always)
    static func append(fields: [(name: String, value: String)], into head: inout ByteWriter) {
        for field in fields {
            head.append("\r\n")
            head.append(string: field.name)
            head.append(": ")
            appendFieldValue(field.value, into: &head)
        }
    }

    /// Appends one piece of a streamed body in its framing (a chunk, or the bytes as they are).
    static func appendPiece(_ piece: [UInt8], chunked: Bool, into out: inout [UInt8]) {
        guard !piece.isEmpty else { return }
        if chunked {
            out.append(contentsOf: String(piece.count, radix: 16).utf8)
            out.append(contentsOf: [0x0D, 0x0A])
            out.append(contentsOf: piece)
            out.append(contentsOf: [0x0D, 0x0A])
        } else {
            out.append(contentsOf: piece)
        }
    }

    /// The last chunk and the empty trailer section that end a chunked body (RFC 9112 §7.1).
    static let lastChunk: [UInt8] = Array("0\r\n\r\n".utf8)

    /// The interim `100 Continue` response (RFC 9110 §15.2.1).
    static let continueResponse: [UInt8] = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// Appends a field value, replacing CR, LF and NUL so a handler can never split a response.
    private static func appendFieldValue(_ value: String, into out: inout ByteWriter) {
        var value = value
        value.withUTF8 { utf8 in
            // The common case, a clean value, is one bulk copy.
            guard utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) else { return out.append(utf8) }
            for b in utf8 { out.append(b == 0x0D || b == 0x0A || b == 0x00 ? 0x20 : b) }
        }
    }

    private static func appendDecimal(_ value: Int, into out: inout ByteWriter) {
        if value < 10 {
            out.append(UInt8(48 + value))
            return
        }
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = value
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buf in
            while n > 0 {
                buf[count] = UInt8(48 + n % 10)
                n /= 10
                count += 1
            }
            for i in stride(from: count - 1, through: 0, by: -1) { out.append(buf[i]) }
        }
    }
}
