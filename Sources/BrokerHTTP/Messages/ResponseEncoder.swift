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
        out.append(contentsOf: "HTTP/1.1 ".utf8)
        appendDecimal(response.status.code, into: &out)
        out.append(0x20)
        out.append(contentsOf: response.status.reason.utf8)
        out.append(contentsOf: "\r\nDate: ".utf8)
        out.append(contentsOf: date)
        let status = response.status.code
        // RFC 9110 §8.6: no Content-Length in 1xx and 204 responses.
        if status != 204 && status >= 200 {
            switch streamFraming {
            case nil:
                out.append(contentsOf: "\r\nContent-Length: ".utf8)
                appendDecimal(response.body.count, into: &out)
            case .length(let length):
                out.append(contentsOf: "\r\nContent-Length: ".utf8)
                appendDecimal(length, into: &out)
            case .chunked:
                out.append(contentsOf: "\r\nTransfer-Encoding: chunked".utf8)
            case .closeDelimited:
                break
            }
        }
        if close {
            out.append(contentsOf: "\r\nConnection: close".utf8)
        } else if keepAliveHTTP10 {
            out.append(contentsOf: "\r\nConnection: keep-alive".utf8)
        }
        if let requestID {
            out.append(contentsOf: "\r\nX-Request-Id: ".utf8)
            out.append(contentsOf: requestID.utf8)
        }
        for field in response.headers.fields {
            out.append(contentsOf: "\r\n".utf8)
            out.append(contentsOf: field.name.utf8)
            out.append(contentsOf: ": ".utf8)
            appendFieldValue(field.value, into: &out)
        }
        out.append(contentsOf: "\r\n\r\n".utf8)
        if includeBody && status != 204 && status != 304 && streamFraming == nil {
            out.append(contentsOf: response.body)
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
    private static func appendFieldValue(_ value: String, into out: inout [UInt8]) {
        let utf8 = value.utf8
        // The common case, a clean value, is one bulk copy.
        let clean = utf8.withContiguousStorageIfAvailable { !$0.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 } } ?? false
        if clean {
            out.append(contentsOf: utf8)
            return
        }
        for b in utf8 {
            out.append(b == 0x0D || b == 0x0A || b == 0x00 ? 0x20 : b)
        }
    }

    private static func appendDecimal(_ value: Int, into out: inout [UInt8]) {
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
