import BrokerHTTP
import Testing

/// RFC 9112 §5 field lines and §3.2 Host.
struct HTTPParserHeaderTests {
    static let rejected: [RawCase] = [
        // Whitespace before the colon (RFC 9112 §5.1, catalogue 3).
        RawCase("space before colon in Host", "GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400),
        RawCase(
            "space before colon in Transfer-Encoding",
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n", 400),
        RawCase("tab before colon", "GET / HTTP/1.1\r\nHost: a\r\nX-A\t: 1\r\n\r\n", 400),
        // Folding (RFC 9112 §5.2 and §2.2, catalogue 4).
        RawCase("obs-fold continuation line", "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n  2\r\n\r\n", 400),
        RawCase("tab continuation line", "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n\t2\r\n\r\n", 400),
        RawCase("space before the first header", "GET / HTTP/1.1\r\n Host: a\r\n\r\n", 400),
        // Control and non-ASCII bytes (RFC 9112 §2.2, RFC 9110 §5.5, catalogue 5).
        RawCase("bare CR in value", "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r2\r\n\r\n", 400),
        RawCase("NUL in value", "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\u{0}2\r\n\r\n", 400),
        RawCase("vertical tab in value", "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\u{0B}2\r\n\r\n", 400),
        RawCase("form feed in value", "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\u{0C}2\r\n\r\n", 400),
        RawCase("DEL in value", "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\u{7F}\r\n\r\n", 400),
        RawCase("escape byte in value", "GET / HTTP/1.1\r\nHost: a\r\nX-A: \u{1B}[0m\r\n\r\n", 400),
        RawCase("control byte in name", "GET / HTTP/1.1\r\nHost: a\r\nX\u{01}A: 1\r\n\r\n", 400),
        RawCase("non-ASCII name", "GET / HTTP/1.1\r\nHost: a\r\nH\u{E9}ader: 1\r\n\r\n", 400),
        RawCase("empty name", "GET / HTTP/1.1\r\nHost: a\r\n: 1\r\n\r\n", 400),
        RawCase("no colon", "GET / HTTP/1.1\r\nHost: a\r\nX-A\r\n\r\n", 400),
        RawCase("slash in name", "GET / HTTP/1.1\r\nHost: a\r\nX/A: 1\r\n\r\n", 400),
        // Line endings (catalogue 6: bare LF rejected everywhere).
        RawCase("bare LF after a header", "GET / HTTP/1.1\r\nHost: a\nX-A: 1\r\n\r\n", 400),
        RawCase("bare LF as the blank line", "GET / HTTP/1.1\r\nHost: a\r\n\n", 400),
        RawCase("bare CR starting a line", "GET / HTTP/1.1\r\nHost: a\r\n\rX\r\n\r\n", 400),
        // Host (RFC 9112 §3.2, catalogue 1 and 2).
        RawCase("HTTP/1.1 without Host", "GET / HTTP/1.1\r\nX-A: 1\r\n\r\n", 400),
        RawCase("two identical Host fields", "GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", 400),
        RawCase("two different Host fields", "GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", 400),
        RawCase("Host with userinfo", "GET / HTTP/1.1\r\nHost: a@b\r\n\r\n", 400),
        RawCase("Host with a slash", "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", 400),
        RawCase("Host list", "GET / HTTP/1.1\r\nHost: a, b\r\n\r\n", 400),
        RawCase("Host with inner space", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400),
        RawCase("empty Host", "GET / HTTP/1.1\r\nHost:\r\n\r\n", 400),
        RawCase("blank Host", "GET / HTTP/1.1\r\nHost:   \r\n\r\n", 400),
        RawCase("Host with only a port", "GET / HTTP/1.1\r\nHost: :80\r\n\r\n", 400),
        RawCase("Host with letters in port", "GET / HTTP/1.1\r\nHost: a:8o\r\n\r\n", 400),
        RawCase("Host with empty port", "GET / HTTP/1.1\r\nHost: a:\r\n\r\n", 400),
        RawCase("Host with six-digit port", "GET / HTTP/1.1\r\nHost: a:123456\r\n\r\n", 400),
        RawCase("Host with unclosed IPv6", "GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", 400),
        RawCase("Host with bad percent escape", "GET / HTTP/1.1\r\nHost: a%zzb\r\n\r\n", 400),
        RawCase("invalid Host on HTTP/1.0", "GET / HTTP/1.0\r\nHost: a@b\r\n\r\n", 400),
    ]

    @Test("A malformed header section is rejected with its status", arguments: rejected)
    func rejectsMalformedHeaders(_ rawCase: RawCase) {
        rawCase.check()
    }

    @Test(
        "A valid Host is accepted",
        arguments: [
            "example.com", "example.com:8080", "127.0.0.1", "127.0.0.1:1", "[::1]", "[::1]:8080",
            "[2001:db8::1]", "[::ffff:192.0.2.1]", "a%2Db", "xn--bcher-kva.example", "localhost", "a_b~c!$&'()*+;=",
        ])
    func acceptsValidHost(_ host: String) throws {
        let request = try #require(ParserFeeder.outcome("GET / HTTP/1.1\r\nHost: \(host)\r\n\r\n").requests.first)
        #expect(request.fields == [TestField(name: "Host", value: host)])
    }

    @Test func acceptsHTTP10WithoutHost() throws {
        let request = try #require(ParserFeeder.outcome("GET /old HTTP/1.0\r\n\r\n").requests.first)
        #expect(request.version == .http1_0)
        #expect(request.path == "/old")
        #expect(request.fields.isEmpty)
    }

    @Test func trimsOptionalWhitespaceAroundValues() throws {
        let request = try #require(
            ParserFeeder.outcome(
                Raw.get(
                    "/",
                    [
                        "X-Spaced: \t  inner  value \t ", "X-Empty:", "X-Blank:   ", "X-Tight:v",
                    ])
            ).requests.first)
        #expect(request.fields.dropFirst().map(\.value) == ["inner  value", "", "", "v"])
    }

    @Test func keepsOrderRepeatsAndNameCase() throws {
        let request = try #require(
            ParserFeeder.outcome(
                Raw.get(
                    "/",
                    [
                        "Accept: a", "x-custom: 1", "ACCEPT: b", "X-Custom: 2",
                    ])
            ).requests.first)
        #expect(
            request.fields.map(\.description) == [
                "Host: example.com", "Accept: a", "x-custom: 1", "ACCEPT: b", "X-Custom: 2",
            ])
    }

    @Test func acceptsEveryTokenByteInNames() throws {
        let name = "!#$%&'*+-.^_`|~09azAZ"
        let request = try #require(ParserFeeder.outcome(Raw.get("/", ["\(name): ok"])).requests.first)
        #expect(request.fields.last == TestField(name: name, value: "ok"))
    }

    @Test func acceptsVisibleASCIIAndObsTextInValues() throws {
        let visible = String(decoding: (0x21...0x7E).map { UInt8($0) }, as: UTF8.self)
        let request = try #require(ParserFeeder.outcome(Raw.get("/", ["X-V: \(visible) caf\u{E9}"])).requests.first)
        #expect(request.fields.last?.value == "\(visible) caf\u{E9}")
    }

    /// Requests one after another on one connection, each with fields longer than a small string (15 bytes), which
    /// the parser takes again from the previous request when the bytes are the same (`HTTPParser.KeptStrings`).
    static let longFieldSequence: [[UInt8]] = {
        let key = "Bearer bench-api-key-0123456789abcdef"
        func get(_ lines: [String]) -> [UInt8] { Array(Raw.get("/account?id=weibo:1", lines).utf8) }
        func get(_ prefix: String, _ bytes: [UInt8], _ suffix: String = "") -> [UInt8] {
            Array("GET / HTTP/1.1\r\nHost: a\r\n\(prefix)".utf8) + bytes + Array("\(suffix)\r\n\r\n".utf8)
        }
        let padding = "-long-enough-to-be-kept"
        return [
            get(["Authorization: \(key)", "X-A-Very-Long-Field-Name: \(key)"]),
            get(["Authorization: \(key)", "X-A-Very-Long-Field-Name: \(key)"]),
            // The same length, one byte different; then in another case, which is another value.
            get(["Authorization: \(key.dropLast())0", "X-A-Very-Long-Field-Name: \(key)"]),
            get(["Authorization: \(key.uppercased())", "x-a-very-long-field-name: \(key)"]),
            // Fewer long strings, then more: each place holds what its request sent.
            get(["X-A-Very-Long-Field-Name: \(key)"]),
            get((0..<12).map { "X-F\($0): value-\($0)\(padding)" }),
            get((0..<12).map { "X-F\($0): value-\($0)\(padding)" }),
            // obs-text: an invalid byte repaired to U+FFFD, twice, then the bytes of U+FFFD itself, then valid UTF-8.
            get("X-Latin1: caf", [0xE9], padding),
            get("X-Latin1: caf", [0xE9], padding),
            get("X-Latin1: caf", [0xEF, 0xBF, 0xBD], padding),
            get("X-Latin1: caf", Array("\u{E9}".utf8), padding),
            get("X-Latin1: caf", [0xE9], padding),
        ]
    }()

    @Test func longFieldsOfOneConnectionAreParsedAsEachRequestAlone() throws {
        let alone = try Self.longFieldSequence.map { try #require(ParserFeeder.outcome($0).requests.first) }
        let together = ParserFeeder.outcome(Self.longFieldSequence.flatMap { $0 })
        #expect(together.error == nil)
        #expect(together.requests.map(\.fields) == alone.map(\.fields))
        #expect(alone[7].fields.last?.value == "caf\u{FFFD}-long-enough-to-be-kept")
        #expect(alone[10].fields.last?.value == "caf\u{E9}-long-enough-to-be-kept")
        #expect(together.requests[2].fields[1].value == "Bearer bench-api-key-0123456789abcde0")
    }

    @Test(
        "A long field sent again with a control byte or bare CR is still rejected",
        arguments: [[0x00], [0x0D], [0x7F], [0x1B], [0x0B]] as [[UInt8]])
    func aRepeatedLongFieldIsValidatedAgain(_ bad: [UInt8]) {
        let value = Array("Bearer bench-api-key-0123456789abcdef".utf8)
        func request(_ value: [UInt8]) -> [UInt8] {
            Array("GET / HTTP/1.1\r\nHost: a\r\nAuthorization: ".utf8) + value + Array("\r\n\r\n".utf8)
        }
        var changed = value
        changed.replaceSubrange(10..<(10 + bad.count), with: bad)
        let outcome = ParserFeeder.outcome(request(value) + request(value) + request(changed))
        #expect(outcome.requests.count == 2)
        #expect(outcome.status == 400)
    }

    @Test func repairsInvalidUTF8InValuesWithoutRejecting() throws {
        let bytes = Array("GET / HTTP/1.1\r\nHost: a\r\nX-Latin1: caf".utf8) + [0xE9] + Array("\r\n\r\n".utf8)
        let request = try #require(ParserFeeder.outcome(bytes).requests.first)
        #expect(request.fields.last?.value == "caf\u{FFFD}")
    }
}
