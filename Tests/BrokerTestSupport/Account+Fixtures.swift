import BrokerCore
import Foundation

extension Date {
    /// 2026-11-30T08:00:00Z, the fixed "now" of these tests.
    public static let fixture = Date(timeIntervalSince1970: 1_796_025_600)
}

extension Account {
    /// An account at `provider` for `uid` with a token derived from the uid, created at ``Date/fixture``.
    public static func make(
        provider: String = "github",
        uid: String = "1001",
        accessToken: String? = nil,
        scope: String? = "repo",
        createdAt: Date = .fixture
    ) -> Account {
        Account(
            provider: provider,
            uid: uid,
            accessToken: Secret(accessToken ?? "gho_access_\(provider)_\(uid)"),
            tokenType: "bearer",
            scope: scope,
            createdAt: createdAt,
            updatedAt: createdAt
        )
    }

    /// An account with every optional field set, dates with fractional seconds included.
    public static func makeFull() -> Account {
        Account(
            provider: "twitter",
            uid: "783214",
            accessToken: Secret("access-SENTINEL-1"),
            tokenType: "bearer",
            scope: "read write",
            refreshToken: Secret("refresh-SENTINEL-2"),
            tokenSecret: Secret("secret-SENTINEL-3"),
            screenName: "Twitter API",
            expiresAt: Date.fixture.addingTimeInterval(3600.25),
            createdAt: Date.fixture.addingTimeInterval(-86_400),
            updatedAt: Date.fixture,
            refreshedAt: Date.fixture.addingTimeInterval(-60),
            status: .reauthorizationRequired,
            issuedAt: Date.fixture.addingTimeInterval(-60),
            refreshTokenExpiresAt: Date.fixture.addingTimeInterval(15_897_600.5),
            idToken: Secret("id-token-SENTINEL-4"),
            extras: #"{"instance_url":"https://na1.example.com","team":{"id":"T1"}}"#,
            endUser: EndUser(id: "end-user-42", email: "ada@example.com", name: "Ada Lovelace"),
            tags: ["plan": "pro", "team": "T-1"]
        )
    }
}

extension PendingFlow {
    /// A flow for `state` at `provider`, created at ``Date/fixture`` and living `lifetime` seconds.
    public static func make(state: String = "c3RhdGUtMTIzNDU2Nzg5MA", provider: String = "github", lifetime: TimeInterval = 600)
        -> PendingFlow
    {
        PendingFlow(
            state: state,
            provider: provider,
            binding: "cookie-hash-\(state.prefix(6))",
            codeVerifier: Secret("verifier-SENTINEL-\(state)"),
            returnTo: "https://app.example/done",
            createdAt: .fixture,
            expiresAt: Date.fixture.addingTimeInterval(lifetime)
        )
    }

    /// A random base64url state of 22 characters (132 bits), as a caller would make.
    public static func randomState() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        return String((0..<22).map { _ in alphabet[Int.random(in: 0..<64)] })
    }
}

extension [Account] {
    /// The accounts in the order `list` promises: by id, in UTF-8 byte order.
    public func sortedByID() -> [Account] {
        sorted { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
    }
}
