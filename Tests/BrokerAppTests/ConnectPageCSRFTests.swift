import Testing

@testable import BrokerApp

/// The Disconnect forms' anti-forgery token: bound to one session cookie and one secret.
@Suite struct ConnectPageCSRFTests {
    static let csrf = ConnectPageCSRF(secret: Array("cookie-secret-0123456789abcdef-0123".utf8))
    static let session = "djF8MTcwMDAwMDAwMHx3ZWlibyUzQTE.bWFj"

    @Test func theTokenOfASessionVerifies() {
        let token = Self.csrf.token(session: Self.session)
        #expect(token.count == 43)  // base64url of 32 bytes, no padding
        #expect(Self.csrf.verify(token, session: Self.session))
    }

    @Test func anotherSessionsTokenOrAnotherSecretsTokenDoesNot() {
        let token = Self.csrf.token(session: Self.session)
        #expect(!Self.csrf.verify(token, session: Self.session + "x"))
        #expect(!Self.csrf.verify(Self.csrf.token(session: "other"), session: Self.session))
        let otherKey = ConnectPageCSRF(secret: Array("another-secret-0123456789abcdef-012".utf8))
        #expect(!otherKey.verify(token, session: Self.session))
        #expect(otherKey.token(session: Self.session) != token)
    }

    @Test(arguments: [nil, "", "x", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"] as [String?])
    func missingShortOrForgedTokensAreRefused(token: String?) {
        #expect(!Self.csrf.verify(token, session: Self.session))
    }

    @Test func aTokenWithoutASessionIsRefused() {
        let token = Self.csrf.token(session: "")
        #expect(!Self.csrf.verify(token, session: nil))
        #expect(!Self.csrf.verify(token, session: ""))
    }

    @Test func aTokenWithExtraBytesIsRefused() {
        let token = Self.csrf.token(session: Self.session)
        #expect(!Self.csrf.verify(token + "A", session: Self.session))
        #expect(!Self.csrf.verify(String(token.dropLast()), session: Self.session))
    }
}
