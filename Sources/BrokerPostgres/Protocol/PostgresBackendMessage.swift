/// A message from the server, decoded from its type byte and body (protocol.sgml, "Message Formats").
enum PostgresBackendMessage: Equatable {
    /// `R`: an authentication request or outcome, by its code.
    case authentication(Authentication)
    /// `S`: a run-time parameter's current value.
    case parameterStatus(name: String, value: String)
    /// `K`: the process id and secret key a CancelRequest names.
    case backendKeyData(processID: Int32, secretKey: Int32)
    /// `Z`: ready for a new query, with the transaction status (`I` idle, `T` in a transaction, `E` failed).
    case readyForQuery(UInt8)
    /// `T`: the result's column names.
    case rowDescription([String])
    /// `D`: one row, each column's text or nil for NULL.
    case dataRow([[UInt8]?])
    /// `C`: the command tag, such as `INSERT 0 1`.
    case commandComplete(String)
    /// `I`: the statement was empty.
    case emptyQueryResponse
    /// `1`, `2`, `3`, `n`, `s`: ParseComplete, BindComplete, CloseComplete, NoData, PortalSuspended.
    case parseComplete, bindComplete, closeComplete, noData, portalSuspended
    /// `E`: an error.
    case error(PostgresServerError)
    /// `N`: a notice.
    case notice(PostgresServerError)
    /// `A`: a NOTIFY delivered to this session.
    case notification(processID: Int32, channel: String, payload: String)
    /// `v`: the server supports an older minor version or not every protocol option asked for.
    case negotiateProtocolVersion(minor: Int32)
    /// `t`: the statement's parameter types (only sent for Describe of a statement, which this client does not use).
    case parameterDescription

    /// The `R` codes this client tells apart.
    enum Authentication: Equatable {
        case ok
        case cleartextPassword
        case md5Password(salt: [UInt8])
        case sasl(mechanisms: [String])
        case saslContinue([UInt8])
        case saslFinal([UInt8])
        /// Kerberos, GSSAPI, SSPI and anything newer: the code.
        case unsupported(Int32)
    }

    /// Decodes the body of a message of `type`; a body that does not match its type's layout is a protocol error.
    static func decode(type: UInt8, body: ArraySlice<UInt8>) throws(PostgresError) -> PostgresBackendMessage {
        var reader = PostgresBodyReader(body, type: type)
        let message: PostgresBackendMessage
        switch type {
        case UInt8(ascii: "R"):
            let code = try reader.int32()
            switch code {
            case 0: message = .authentication(.ok)
            case 3: message = .authentication(.cleartextPassword)
            case 5: message = .authentication(.md5Password(salt: try reader.bytes(4)))
            case 10:
                var mechanisms: [String] = []
                while true {
                    let name = try reader.string()
                    if name.isEmpty { break }
                    mechanisms.append(name)
                }
                message = .authentication(.sasl(mechanisms: mechanisms))
            case 11: message = .authentication(.saslContinue(reader.rest()))
            case 12: message = .authentication(.saslFinal(reader.rest()))
            default: message = .authentication(.unsupported(code))
            }
        case UInt8(ascii: "S"):
            message = .parameterStatus(name: try reader.string(), value: try reader.string())
        case UInt8(ascii: "K"):
            // Protocol 3.0 keys are 4 bytes (3.2 allows up to 256; this client asks for 3.0).
            message = .backendKeyData(processID: try reader.int32(), secretKey: try reader.int32())
        case UInt8(ascii: "Z"):
            let status = try reader.bytes(1)[0]
            guard status == UInt8(ascii: "I") || status == UInt8(ascii: "T") || status == UInt8(ascii: "E") else {
                throw .protocolError("ReadyForQuery with an unknown transaction status")
            }
            message = .readyForQuery(status)
        case UInt8(ascii: "T"):
            let count = try reader.count()
            var names: [String] = []
            names.reserveCapacity(count)
            for _ in 0..<count {
                names.append(try reader.string())
                // table oid, column number, type oid, type size, type modifier, format code
                _ = try reader.bytes(4 + 2 + 4 + 2 + 4 + 2)
            }
            message = .rowDescription(names)
        case UInt8(ascii: "D"):
            let count = try reader.count()
            var columns: [[UInt8]?] = []
            columns.reserveCapacity(count)
            for _ in 0..<count {
                let length = try reader.int32()
                if length == -1 {
                    columns.append(nil)
                } else {
                    guard length >= 0 else { throw .protocolError("DataRow with a negative column length") }
                    columns.append(try reader.bytes(Int(length)))
                }
            }
            message = .dataRow(columns)
        case UInt8(ascii: "C"):
            message = .commandComplete(try reader.string())
        case UInt8(ascii: "I"): message = .emptyQueryResponse
        case UInt8(ascii: "1"): message = .parseComplete
        case UInt8(ascii: "2"): message = .bindComplete
        case UInt8(ascii: "3"): message = .closeComplete
        case UInt8(ascii: "n"): message = .noData
        case UInt8(ascii: "s"): message = .portalSuspended
        case UInt8(ascii: "t"):
            _ = reader.rest()
            message = .parameterDescription
        case UInt8(ascii: "E"):
            message = .error(try fields(&reader))
        case UInt8(ascii: "N"):
            message = .notice(try fields(&reader))
        case UInt8(ascii: "A"):
            message = .notification(processID: try reader.int32(), channel: try reader.string(), payload: try reader.string())
        case UInt8(ascii: "v"):
            let minor = try reader.int32()
            _ = reader.rest()
            message = .negotiateProtocolVersion(minor: minor)
        default:
            throw .protocolError("unknown message type \(printable(type))")
        }
        guard reader.isAtEnd else { throw .protocolError("message \(printable(type)) is longer than its fields") }
        return message
    }

    /// ErrorResponse and NoticeResponse: `(code byte, string)*` then NUL; unknown codes are ignored.
    private static func fields(_ reader: inout PostgresBodyReader) throws(PostgresError) -> PostgresServerError {
        var fields = PostgresServerError(severity: "", code: "", message: "")
        var localizedSeverity = ""
        while true {
            let code = try reader.bytes(1)[0]
            if code == 0 { break }
            let value = try reader.string()
            switch code {
            case UInt8(ascii: "S"): localizedSeverity = value
            case UInt8(ascii: "V"): fields.severity = value
            case UInt8(ascii: "C"): fields.code = value
            case UInt8(ascii: "M"): fields.message = value
            case UInt8(ascii: "D"): fields.detail = value
            case UInt8(ascii: "H"): fields.hint = value
            case UInt8(ascii: "n"): fields.constraint = value
            case UInt8(ascii: "t"): fields.table = value
            default: break
            }
        }
        // `V` exists since 9.6; older servers send only the localized `S`.
        if fields.severity.isEmpty { fields.severity = localizedSeverity }
        return fields
    }

    /// A type byte as a letter for messages, or its number when it is not printable.
    static func printable(_ type: UInt8) -> String {
        (0x21...0x7e).contains(type) ? "'\(Character(UnicodeScalar(type)))'" : "0x\(String(type, radix: 16))"
    }
}

/// Reads a message body field by field; every read is bounds-checked and a short body is a protocol error.
struct PostgresBodyReader {
    private let body: ArraySlice<UInt8>
    private var index: Int
    private let type: UInt8

    init(_ body: ArraySlice<UInt8>, type: UInt8) {
        self.body = body
        self.index = body.startIndex
        self.type = type
    }

    var isAtEnd: Bool { index == body.endIndex }

    mutating func int32() throws(PostgresError) -> Int32 {
        let raw = try bytes(4)
        return Int32(bitPattern: UInt32(raw[0]) << 24 | UInt32(raw[1]) << 16 | UInt32(raw[2]) << 8 | UInt32(raw[3]))
    }

    /// An Int16 count that must not be negative.
    mutating func count() throws(PostgresError) -> Int {
        let raw = try bytes(2)
        let value = Int16(bitPattern: UInt16(raw[0]) << 8 | UInt16(raw[1]))
        guard value >= 0 else { throw .protocolError("message \(PostgresBackendMessage.printable(type)) has a negative count") }
        return Int(value)
    }

    mutating func bytes(_ count: Int) throws(PostgresError) -> [UInt8] {
        guard count >= 0, body.endIndex - index >= count else {
            throw .protocolError("message \(PostgresBackendMessage.printable(type)) is shorter than its fields")
        }
        defer { index += count }
        return Array(body[index..<index + count])
    }

    /// A NUL-terminated string, decoded as UTF-8 (invalid bytes become U+FFFD).
    mutating func string() throws(PostgresError) -> String {
        guard let nul = body[index...].firstIndex(of: 0) else {
            throw .protocolError("message \(PostgresBackendMessage.printable(type)) has a string without its NUL")
        }
        defer { index = nul + 1 }
        return String(decoding: body[index..<nul], as: UTF8.self)
    }

    mutating func rest() -> [UInt8] {
        defer { index = body.endIndex }
        return Array(body[index...])
    }
}

/// Cuts the server's byte stream into messages: `Byte1 type`, `Int32 length` (counting itself), the body.
///
/// Every length is checked before it is used: below 4 or above the cap is a protocol error, so a hostile or
/// broken server can neither make the client allocate without bound nor trap on arithmetic.
struct PostgresMessageFramer {
    /// The largest body accepted.
    let maximumMessageBytes: Int
    private var buffer: [UInt8] = []
    private var start = 0

    init(maximumMessageBytes: Int) {
        self.maximumMessageBytes = max(1024, maximumMessageBytes)
    }

    /// Appends bytes read from the socket.
    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        if start > 0 && start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 65_536 && start * 2 > buffer.count {
            buffer.removeSubrange(0..<start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Whether no partial message is held.
    var isEmpty: Bool { start == buffer.count }

    /// The next complete message, nil when more bytes are needed.
    mutating func next() throws(PostgresError) -> PostgresBackendMessage? {
        let available = buffer.count - start
        guard available >= 5 else { return nil }
        let type = buffer[start]
        let length = Int32(
            bitPattern: UInt32(buffer[start + 1]) << 24 | UInt32(buffer[start + 2]) << 16 | UInt32(buffer[start + 3]) << 8
                | UInt32(buffer[start + 4]))
        guard length >= 4 else { throw .protocolError("message \(PostgresBackendMessage.printable(type)) has length \(length)") }
        let bodyLength = Int(length) - 4
        guard bodyLength <= maximumMessageBytes else {
            throw .protocolError(
                "message \(PostgresBackendMessage.printable(type)) of \(bodyLength) bytes is over the \(maximumMessageBytes)-byte cap")
        }
        guard available - 5 >= bodyLength else { return nil }
        let bodyStart = start + 5
        start = bodyStart + bodyLength
        return try PostgresBackendMessage.decode(type: type, body: buffer[bodyStart..<bodyStart + bodyLength])
    }

    /// Forgets everything held.
    mutating func reset() {
        buffer.removeAll(keepingCapacity: false)
        start = 0
    }
}
