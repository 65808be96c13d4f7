import BrokerCore
import BrokerHTTP
import Testing

@testable import BrokerApp

/// Who may use an account is decided on exact bytes: the API key, and the account ids a browser's session lists.
struct AccessControlIdentityTests {
    static let secret = Array("cookie-secret-0123456789abcdef0123".utf8)
    static let access = AccessControl(
        apiKeys: [NamedAPIKey(name: "default", key: Secret("Key-0123456789abcdef"))], cookieSecret: secret, sessionMaxAge: 3600)

    static func request(_ headers: [(String, String)]) -> Request {
        let head = HTTPRequestHead(
            method: .GET, target: "/account", path: "/account", query: nil, version: .http1_1,
            headers: HTTPHeaders(headers), keepAlive: true, expectContinue: false, framing: .none)
        return Request(head: head)
    }

    static func browser(holding ids: [String]) -> Request {
        let cookie = SessionCookie(accountIDs: ids, issuedAt: 1_796_025_600).encode(secret: secret)
        return request([("Cookie", SessionCookie.name + "=" + cookie)])
    }

    @Test func anAPIKeySpelledWithALookAlikeIsRefused() {
        #expect(Self.access.hasAPIKey(Self.request([("Authorization", "Bearer Key-0123456789abcdef")])))
        // U+212A KELVIN SIGN is canonically equivalent to "K".
        #expect(!Self.access.hasAPIKey(Self.request([("Authorization", "Bearer \u{212A}ey-0123456789abcdef")])))
    }

    /// RFC 9110 §11.1: the scheme is case-insensitive, then one space; nothing else is taken for `Bearer `.
    @Test(
        "The Bearer scheme in any case, and only it, carries the key",
        arguments: [
            ("Bearer Key-0123456789abcdef", true), ("bearer Key-0123456789abcdef", true), ("BEARER Key-0123456789abcdef", true),
            ("bEaReR Key-0123456789abcdef", true), ("Bearer\tKey-0123456789abcdef", false), ("Bearer  Key-0123456789abcdef", false),
            ("Bearer\u{0}Key-0123456789abcdef", false), ("Bearer:Key-0123456789abcdef", false), ("Basic Key-0123456789abcdef", false),
            ("Bearez Key-0123456789abcdef", false), ("Bearer\u{C0}Key-0123456789abcdef", false),
            ("B\u{C5}arer Key-0123456789abcdef", false),
            ("Bearer key-0123456789abcdef", false), ("Bearer ", false), ("Bearer", false), ("Bearer K", false), ("", false),
        ])
    func theBearerScheme(_ value: String, _ accepted: Bool) {
        #expect(Self.access.hasAPIKey(Self.request([("Authorization", value)])) == accepted)
    }

    @Test func aSessionHoldsOnlyTheExactIDsItConnected() throws {
        let composed = "acme:caf\u{E9}", decomposed = "acme:cafe\u{301}"
        let browser = Self.browser(holding: [composed])
        #expect(throws: Never.self) { try Self.access.require(browser, mayUse: composed) }
        #expect(throws: BrokerError.unauthorized) { try Self.access.require(browser, mayUse: decomposed) }
        let decoded = try #require(Self.access.session(browser))
        #expect(decoded.holds(composed) && !decoded.holds(decomposed))

        var session = decoded
        session.insert(decomposed)
        #expect(session.accountIDs.count == 2)
    }
}
