import BrokerCore
import Testing

/// Which header fields an API proxy call forwards: the caller's to the provider, the provider's back to the caller.
struct ProxyHeadersTests {
    typealias Field = ProxyHeaders.Field

    static func names(_ fields: [Field]) -> [String] { fields.map(\.name) }

    @Test func theCallersCredentialsHostFramingAndHopByHopFieldsStayBehindAndTheRestKeepTheirOrder() {
        let caller: [Field] = [
            ("Accept", "application/json"), ("Authorization", "Bearer broker-api-key"), ("X-Request-Tag", "a"),
            ("Proxy-Authorization", "Basic eA=="), ("Cookie", "sid=1"), ("Host", "broker.example"),
            ("Content-Length", "12"), ("Transfer-Encoding", "chunked"), ("Connection", "keep-alive, X-Secret-Hop"),
            ("Keep-Alive", "timeout=5"), ("Proxy-Connection", "keep-alive"), ("TE", "trailers"), ("Trailer", "X-Sum"),
            ("Upgrade", "websocket"), ("Expect", "100-continue"), ("X-Secret-Hop", "1"), ("Broker-Account", "github:1"),
            ("broker-end-user", "u"), ("Content-Type", "application/json"), ("X-Request-Tag", "b"),
        ]
        #expect(Self.names(ProxyHeaders.request(caller)) == ["Accept", "X-Request-Tag", "Content-Type", "X-Request-Tag"])
    }

    @Test func fieldsNamedByConnectionAreDroppedWhateverTheirCaseAndSpacing() {
        let caller: [Field] = [
            ("connection", " x-one ,,X-Two\t"), ("CONNECTION", "x-three"), ("X-One", "1"), ("x-two", "2"), ("X-Three", "3"),
            ("X-Four", "4"),
        ]
        #expect(Self.names(ProxyHeaders.request(caller)) == ["X-Four"])
    }

    @Test func malformedFieldsFromTheInternetAreDroppedNotForwardedAndNeverTrap() {
        let caller: [Field] = [
            ("X-Ok", "fine value"), ("X Bad", "1"), ("", "empty name"), ("X-Inject", "a\r\nHost: evil.example"),
            ("X-Nul", "a\u{0}b"), ("X-Del", "a\u{7f}"), ("X-Lead", " padded"), ("X-Obs", "caf\u{e9}"), ("X-Tab", "a\tb"),
            ("X-Caf\u{e9}", "1"), ("Connection", "\u{0}, X-Ok2"), ("X-Ok2", "2"), ("X-Empty", ""),
        ]
        #expect(Self.names(ProxyHeaders.request(caller)) == ["X-Ok", "X-Obs", "X-Tab", "X-Empty"])
    }

    @Test func theProvidersCookiesAuthenticationHopByHopAndFramingFieldsAreNotReturned() {
        let provider: [Field] = [
            ("Content-Type", "application/json"), ("Set-Cookie", "session=1; Secure"), ("Set-Cookie2", "a=1"),
            ("Connection", "close, X-RateLimit-Internal"), ("X-RateLimit-Internal", "1"), ("Keep-Alive", "timeout=5"),
            ("Transfer-Encoding", "chunked"), ("Content-Length", "10"), ("Upgrade", "h2c"), ("Trailer", "X-Sum"),
            ("Proxy-Authenticate", "Basic"), ("Authentication-Info", "nextnonce=\"x\""), ("Retry-After", "3600"),
            ("WWW-Authenticate", "Bearer error=\"invalid_token\""), ("ETag", "\"v1\""), ("Location", "https://api.example.com/x"),
        ]
        #expect(
            Self.names(ProxyHeaders.response(provider))
                == ["Content-Type", "Retry-After", "WWW-Authenticate", "ETag", "Location"])
    }

    /// The broker writes its own `Date` (RFC 9110 §6.6.1: a singleton) and `X-Request-Id`; the provider's `Date` stays
    /// behind and its request id comes back, in place, as `Provider-Request-Id`.
    @Test func theProvidersDateStaysBehindAndItsRequestIDIsRenamed() {
        let provider: [Field] = [
            ("Date", "Mon, 07 Dec 2026 17:00:00 GMT"), ("Content-Type", "application/json"), ("x-request-id", "prov-42"),
            ("ETag", "\"v1\""), ("DATE", "again"),
        ]
        let kept = ProxyHeaders.response(provider)
        #expect(Self.names(kept) == ["Content-Type", "Provider-Request-Id", "ETag"])
        #expect(kept[1].value == "prov-42")
        // A request id echoing the credential is dropped like any other field, and Connection may name it.
        #expect(Self.names(ProxyHeaders.response([("X-Request-Id", "tok-123456")], secrets: ["tok-123456"])).isEmpty)
        #expect(Self.names(ProxyHeaders.response([("Connection", "X-Request-Id"), ("X-Request-Id", "1")])).isEmpty)
    }

    /// Values are checked eight bytes a step: a refused byte is found wherever it stands in a long value, and tabs and
    /// obs-text inside one are kept.
    @Test func aRefusedByteIsFoundAtAnyPlaceInALongValue() {
        for length in 1...40 {
            for place in 0..<length {
                for refused: UInt8 in [0x00, 0x0A, 0x0D, 0x1F, 0x7F] {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes[place] = refused
                    #expect(!ProxyHeaders.isFieldValue(String(decoding: bytes, as: UTF8.self)), "\(length) \(place) \(refused)")
                }
                if place > 0, place < length - 1 {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes[place] = 0x09
                    #expect(ProxyHeaders.isFieldValue(String(decoding: bytes, as: UTF8.self)))
                }
            }
        }
        #expect(ProxyHeaders.isFieldValue("caf\u{e9} na\u{ef}ve r\u{e9}sum\u{e9}, \u{2603} \u{1F600} and more text"))
    }

    @Test func aResponseFieldEchoingThePlacedCredentialIsNotReturned() {
        let provider: [Field] = [
            ("Location", "https://api.example.com/next?access_token=tok-123456"), ("X-Echo", "key=app-key-9"),
            ("X-Short", "ab"), ("Link", "<https://api.example.com/p2>; rel=\"next\""), ("X-Start", "tok-123456; v=1"),
            ("X-Whole", "app-key-9"), ("X-Almost", "tok-12345"), ("X-Case", "TOK-123456"),
        ]
        let kept = ProxyHeaders.response(provider, secrets: ["tok-123456", "app-key-9", "ab", ""])
        #expect(Self.names(kept) == ["X-Short", "Link", "X-Almost", "X-Case"])
    }

    /// The search skips from one occurrence of the secret's first byte to the next: a match after many false starts,
    /// one ending at the value's last byte, and a value one byte shorter than the secret are each found or not as they are.
    @Test func theCredentialIsFoundAfterFalseStartsAndAtTheVeryEnd() {
        let provider: [Field] = [
            ("X-Repeats", "tttok-tok-12tok-123456"), ("X-End", "a=tok-123456"), ("X-Tail", "tok-123456x"),
            ("X-Short", "ok-123456"), ("X-Partial", "tok-1234tok-12345"), ("X-Utf8", "caf\u{e9} tok-123456"),
        ]
        #expect(Self.names(ProxyHeaders.response(provider, secrets: ["tok-123456"])) == ["X-Short", "X-Partial"])
    }

    /// Field names and value pieces the generator draws from: dropped and kept names in any case, separators,
    /// control bytes, obs-text and whitespace at the ends.
    static let namePieces = [
        "Connection", "connection", "X-A", "x-b", "Cookie", "Set-Cookie", "Keep-Alive", "Broker-Account", "TE", "Host",
        "Content-Type", "X A", "X\u{0}", "caf\u{e9}", "", "Upgrade", "Authorization", "Location",
    ]
    static let valuePieces = ["x-a", "X-B", ",", " ", "\t", "\r\n", "\u{0}", "\u{7f}", "tok-secret", "\u{e9}", "=", ";", "a"]

    /// Thousands of fields built from a fixed pseudo-random sequence: whatever arrives, what is kept is a well-formed,
    /// in-order subset of the input without a dropped, Connection-named or secret-bearing field, and nothing traps.
    @Test func anyFieldsGiveAWellFormedInOrderSubsetWithoutTheDroppedOnes() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            // xorshift64: deterministic, so a failure replays.
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return Int(state % UInt64(bound))
        }
        for _ in 0..<500 {
            let fields: [Field] = (0..<next(12)).map { _ in
                let name = Self.namePieces[next(Self.namePieces.count)]
                let value = (0..<next(6)).map { _ in Self.valuePieces[next(Self.valuePieces.count)] }.joined()
                return (name, value)
            }
            let named = Set(
                fields.filter { $0.name.lowercased() == "connection" }
                    .flatMap { $0.value.lowercased().split(separator: ",").map { $0.trimmingCharacters(in: [" ", "\t"]) } })
            let outputs = [(ProxyHeaders.request(fields), true), (ProxyHeaders.response(fields, secrets: ["tok-secret"]), false)]
            for (kept, isRequest) in outputs {
                var input = fields[...]
                for field in kept {
                    // In order: each kept field is the next matching one of the input.
                    guard let index = input.firstIndex(where: { $0.name == field.name && $0.value == field.value }) else {
                        Issue.record("a kept field is not in the input in order")
                        break
                    }
                    input = input[(index + 1)...]
                    let name = field.name.lowercased()
                    #expect(ProxyHeaders.isWellFormed(field))
                    #expect(!["connection", "keep-alive", "te", "upgrade"].contains(name) && !named.contains(name))
                    if isRequest {
                        #expect(!["host", "cookie", "authorization"].contains(name) && !name.hasPrefix("broker-"))
                    } else {
                        #expect(name != "set-cookie" && !field.value.contains("tok-secret"))
                    }
                }
            }
        }
    }
}
