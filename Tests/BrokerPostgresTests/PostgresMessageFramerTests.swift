import Testing

@testable import BrokerPostgres

/// The server-message framer and decoder: every split of a stream gives the same messages, and bad lengths are
/// protocol errors, never traps or unbounded allocations.
struct PostgresMessageFramerTests {
    /// A message as the server frames it.
    private static func message(_ type: Character, _ body: [UInt8]) -> [UInt8] {
        let length = UInt32(body.count + 4)
        return [type.asciiValue!, UInt8(length >> 24), UInt8((length >> 16) & 0xff), UInt8((length >> 8) & 0xff), UInt8(length & 0xff)]
            + body
    }

    private static func int32(_ value: Int32) -> [UInt8] {
        let bits = UInt32(bitPattern: value)
        return [UInt8(bits >> 24), UInt8((bits >> 16) & 0xff), UInt8((bits >> 8) & 0xff), UInt8(bits & 0xff)]
    }

    private static let stream: [UInt8] =
        message("S", Array("server_version\u{0}15.10\u{0}".utf8))
        + message("K", int32(4242) + int32(-7))
        + message("T", [0, 1] + Array("a\u{0}".utf8) + [UInt8](repeating: 0, count: 18))
        + message("D", [0, 1] + int32(3) + Array("xyz".utf8))
        + message("D", [0, 1] + int32(-1))
        + message("C", Array("SELECT 2\u{0}".utf8))
        + message("E", Array("SERROR\u{0}VERROR\u{0}C23505\u{0}Mduplicate key\u{0}Dsecret detail\u{0}nuniq\u{0}Xunknown\u{0}\u{0}".utf8))
        + message("Z", [UInt8(ascii: "I")])

    private static let expected: [PostgresBackendMessage] = [
        .parameterStatus(name: "server_version", value: "15.10"),
        .backendKeyData(processID: 4242, secretKey: -7),
        .rowDescription(["a"]),
        .dataRow([Array("xyz".utf8)]),
        .dataRow([nil]),
        .commandComplete("SELECT 2"),
        .error(
            PostgresServerError(severity: "ERROR", code: "23505", message: "duplicate key", detail: "secret detail", constraint: "uniq")),
        .readyForQuery(UInt8(ascii: "I")),
    ]

    @Test("a stream split at every byte boundary gives the same messages")
    func everySplit() throws {
        for split in 0...Self.stream.count {
            var framer = PostgresMessageFramer(maximumMessageBytes: 1 << 20)
            var messages: [PostgresBackendMessage] = []
            for part in [Array(Self.stream[..<split]), Array(Self.stream[split...])] {
                part.withUnsafeBufferPointer { framer.append($0) }
                while let message = try framer.next() { messages.append(message) }
            }
            #expect(messages == Self.expected, "split at \(split)")
            #expect(framer.isEmpty)
        }
    }

    @Test("an ErrorResponse's description has severity, code and message, never its detail")
    func errorDescription() {
        let error = PostgresServerError(severity: "ERROR", code: "23505", message: "duplicate key", detail: "Key (uid)=(secret) exists")
        #expect(PostgresError.from(error) == .uniqueViolation(error))
        #expect(!"\(PostgresError.from(error))".contains("secret"))
    }

    @Test(
        "bad lengths and short bodies are protocol errors",
        arguments: [
            [UInt8(ascii: "Z"), 0, 0, 0, 3],  // length below 4
            [UInt8(ascii: "Z"), 0xff, 0xff, 0xff, 0xff],  // negative length
            [UInt8(ascii: "D"), 0x7f, 0xff, 0xff, 0xff],  // over the cap
            message("D", [0, 1] + int32(-2)),  // negative column length
            message("D", [0, 1] + int32(100) + [1, 2]),  // column longer than the body
            message("D", [0xff, 0xff]),  // negative column count
            message("T", [0, 2] + Array("a\u{0}".utf8)),  // fewer fields than counted
            message("S", Array("no-nul".utf8)),  // string without its NUL
            message("Z", [UInt8(ascii: "Q")]),  // unknown transaction status
            message("Z", [UInt8(ascii: "I"), 0]),  // longer than its fields
            message("?", []),  // unknown type
            message("R", [0, 0]),  // short authentication code
        ])
    func malformed(bytes: [UInt8]) {
        var framer = PostgresMessageFramer(maximumMessageBytes: 1 << 20)
        bytes.withUnsafeBufferPointer { framer.append($0) }
        #expect(throws: PostgresError.self) { _ = try framer.next() }
    }

    @Test("the frontend frames Bind with text parameters and NULL as length -1")
    func bindEncoding() {
        var frontend = PostgresFrontend()
        frontend.bind(statement: "s1", parameters: [Array("ab".utf8), nil])
        let body: [UInt8] = [0] + Array("s1".utf8) + [0] + [0, 0] + [0, 2] + Self.int32(2) + Array("ab".utf8) + Self.int32(-1) + [0, 0]
        #expect(frontend.bytes == Self.message("B", body))
    }

    @Test("md5 login: `md5` + md5(md5(password + user) + salt) in hex, NUL-terminated (value from Python's hashlib)")
    func md5Response() {
        let response = PostgresConnection.md5Response(password: Array("pw".utf8), user: "u", salt: [1, 2, 3, 4])
        #expect(response == Array("md50803a98a0618b75c8f9a50f280cad373".utf8) + [0])
    }
}
