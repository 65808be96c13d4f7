/// Encodes the client's messages of protocol 3.0: a type byte, an Int32 length counting itself, then the body.
///
/// Integers are big-endian and strings end with NUL (protocol.sgml, "Message Formats"). Callers make sure
/// strings hold no NUL (``PostgresQuery`` checks statements; parameters are length-prefixed, not NUL-ended).
struct PostgresFrontend {
    /// The bytes encoded so far; several messages are appended to one buffer and sent in one write.
    private(set) var bytes: [UInt8] = []

    /// Protocol 3.0 (major 3, minor 0), which every server since 7.4 speaks.
    static let protocolVersion: Int32 = 196_608
    /// The CancelRequest code, 1234 << 16 | 5678.
    static let cancelRequestCode: Int32 = 80_877_102
    /// 1234 in the high 16 bits, 5679 in the low (protocol.sgml, "SSLRequest").
    static let sslRequestCode: Int32 = 80_877_103

    /// StartupMessage: no type byte, the version, then `name\0value\0` pairs and a final NUL.
    mutating func startup(parameters: [(String, String)]) {
        message(type: nil) { body in
            body.int32(Self.protocolVersion)
            for (name, value) in parameters {
                body.string(name)
                body.string(value)
            }
            body.bytes.append(0)
        }
    }

    /// CancelRequest, sent alone on a new connection: length 16, the code, the backend's process id and key.
    /// SSLRequest (protocol.sgml, "SSLRequest"): asks the server to start TLS before anything else is sent.
    mutating func sslRequest() {
        message(type: nil) { body in body.int32(Self.sslRequestCode) }
    }

    mutating func cancelRequest(processID: Int32, secretKey: Int32) {
        message(type: nil) { body in
            body.int32(Self.cancelRequestCode)
            body.int32(processID)
            body.int32(secretKey)
        }
    }

    /// SASLInitialResponse `p`: the mechanism, then the client-first message with its length.
    mutating func saslInitialResponse(mechanism: String, data: [UInt8]) {
        message(type: "p") { body in
            body.string(mechanism)
            body.int32(Int32(truncatingIfNeeded: data.count))
            body.bytes += data
        }
    }

    /// SASLResponse or PasswordMessage `p`: the bytes as they are.
    mutating func passwordMessage(_ data: [UInt8]) {
        message(type: "p") { body in body.bytes += data }
    }

    /// Query `Q`: one simple-protocol statement.
    mutating func query(_ sql: String) {
        message(type: "Q") { body in body.string(sql) }
    }

    /// Parse `P`: a statement name (empty = the unnamed statement), the SQL, and no parameter types (the server infers them).
    mutating func parse(statement: String, sql: String) {
        message(type: "P") { body in
            body.string(statement)
            body.string(sql)
            body.int16(0)
        }
    }

    /// Bind `B` to the unnamed portal: every parameter in text format (format code 0), NULL as length -1,
    /// and every result column in text format.
    mutating func bind(statement: String, parameters: [[UInt8]?]) {
        message(type: "B") { body in
            body.string("")
            body.string(statement)
            body.int16(0)  // no parameter format codes: all text
            body.int16(Int16(truncatingIfNeeded: parameters.count))
            for parameter in parameters {
                if let parameter {
                    body.int32(Int32(truncatingIfNeeded: parameter.count))
                    body.bytes += parameter
                } else {
                    body.int32(-1)
                }
            }
            body.int16(0)  // no result format codes: all text
        }
    }

    /// Describe `D` of the unnamed portal: its RowDescription, or NoData.
    mutating func describePortal() {
        message(type: "D") { body in
            body.bytes.append(UInt8(ascii: "P"))
            body.string("")
        }
    }

    /// Execute `E` of the unnamed portal, every row (0 = no limit).
    mutating func execute() {
        message(type: "E") { body in
            body.string("")
            body.int32(0)
        }
    }

    /// Sync `S`: ends the implicit transaction and asks for ReadyForQuery.
    mutating func sync() {
        message(type: "S") { _ in }
    }

    /// Terminate `X`.
    mutating func terminate() {
        message(type: "X") { _ in }
    }

    /// Appends one message: the type byte (none for start-up packets), a length placeholder, the body, then the length.
    private mutating func message(type: Character?, _ body: (inout PostgresFrontend) -> Void) {
        if let type, let ascii = type.asciiValue { bytes.append(ascii) }
        let lengthAt = bytes.count
        int32(0)
        body(&self)
        let length = Int32(truncatingIfNeeded: bytes.count - lengthAt)
        withUnsafeBytes(of: length.bigEndian) { bytes.replaceSubrange(lengthAt..<lengthAt + 4, with: $0) }
    }

    private mutating func int32(_ value: Int32) {
        withUnsafeBytes(of: value.bigEndian) { bytes += $0 }
    }

    private mutating func int16(_ value: Int16) {
        withUnsafeBytes(of: value.bigEndian) { bytes += $0 }
    }

    private mutating func string(_ value: String) {
        bytes += value.utf8
        bytes.append(0)
    }
}
