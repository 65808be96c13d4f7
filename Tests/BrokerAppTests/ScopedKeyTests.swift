import BrokerCore
import BrokerFakeProviders
import BrokerHTTP
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// `BROKER_API_KEY_SCOPES`: keys that may do only part of what the API offers, on some providers or end users.
@Suite(.scoped) struct ScopedKeyTests {
    static let clientSecret = "ACME-CLIENT-SECRET-scoped-keys"
    static let reader = "reader-key-0123456789abcdef0123456789abcdef"
    static let jobs = "jobs-key-0123456789abcdef0123456789abcdef00"
    static let tenant = "tenant-key-0123456789abcdef0123456789abcdef"
    static let admin = [("Authorization", "Bearer " + BrokerHarness.apiKey), ("Content-Type", "application/json")]

    static func bearer(_ key: String) -> [(String, String)] { [("Authorization", "Bearer " + key), ("Content-Type", "application/json")] }

    struct Setup {
        let provider: FakeOAuth2Provider
        let broker: BrokerHarness

        /// A sign-in a back end started for end user `endUser`; the account's id.
        func connect(endUser: String, user: String) async throws -> String {
            provider.set { $0.users = .fixed(user) }
            let started = await broker.respond(
                .POST, "/authorize", headers: ScopedKeyTests.admin, body: "{\"provider\":\"acme\",\"end_user_id\":\"\(endUser)\"}")
            let json = (try? JSONSerialization.jsonObject(with: Data(started.body))) as? [String: Any]
            let authorizeURL = try #require(json?["authorize_url"] as? String)
            let url = try #require(URL(string: authorizeURL))
            let page = try #require(await TestHTTP.send(port: provider.port, target: url.path + "?" + (url.query ?? "")))
            let location = try #require(page.header("Location"))
            let back = try #require(URL(string: location))
            let done = await broker.respond(.GET, back.path + "?" + (back.query ?? ""), headers: [("Accept", "application/json")])
            #expect(done.status.code == 200)
            return "acme:" + user
        }

        func status(_ method: HTTPMethod, _ target: String, key: String, body: String = "") async -> (Int, String?) {
            let reply = await broker.respond(method, target, headers: ScopedKeyTests.bearer(key), body: body)
            let json = (try? JSONSerialization.jsonObject(with: Data(reply.body))) as? [String: Any]
            return (reply.status.code, json?["error"] as? String)
        }
    }

    static func setUp() throws -> Setup {
        let provider = try FakeOAuth2Provider.scoped(.rfc6749(clientSecret: clientSecret))
        let broker = try BrokerHarness(
            providersJSON: "{\"providers\": {\(provider.providerEntry()), \(provider.providerEntry(name: "other"))}}",
            environment: [
                "FAKE_ACME_SECRET": clientSecret, "BROKER_REFRESH_INTERVAL": "0", "BROKER_CORS_ORIGINS": "https://app.example.com",
                "BROKER_API_KEYS": "reader:\(reader),jobs:\(jobs),tenant:\(tenant)",
                "BROKER_API_KEY_SCOPES":
                    "reader=tokens:read accounts:read; jobs=proxy tokens:read provider:other; tenant=all end_user:t1-*",
            ], listen: false)
        return Setup(provider: provider, broker: broker)
    }

    @Test func scopesAreReadAtStartAndABadOneStopsItNamingTheVariable() throws {
        let base = ["BROKER_API_KEY": BrokerHarness.apiKey, "BROKER_API_KEYS": "ci:\(Self.reader)"]
        let c = try BrokerConfiguration.from(
            environment: base.merging(["BROKER_API_KEY_SCOPES": "ci=tokens:read provider:github end_user:acme-*"]) { $1 })
        let ci = try #require(c.callerKeys.first { $0.name == "ci" })
        #expect(ci.grant == KeyGrant(scopes: [.tokensRead], providers: ["github"], endUserPrefix: "acme-"))
        #expect(ci.grant.description == "tokens:read provider:github end_user:acme-*")
        #expect(c.callerKeys.first { $0.name == "default" }?.grant == .all)
        let report = ConfigCheck.report(c)
        let lines = report.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }
        #expect(lines.contains("key ci tokens:read provider:github end_user:acme-*") && lines.contains("key default all"), "\(report)")
        #expect(!report.contains(Self.reader))
        for bad in ["nobody=tokens:read", "ci=tokens:write", "ci=", "ci tokens:read", "ci=proxy;ci=admin", "ci=end_user:acme"] {
            #expect(throws: ConfigurationError.self, "\(bad)") {
                try BrokerConfiguration.from(environment: base.merging(["BROKER_API_KEY_SCOPES": bad]) { $1 })
            }
            do {
                _ = try BrokerConfiguration.from(environment: base.merging(["BROKER_API_KEY_SCOPES": bad]) { $1 })
            } catch {
                #expect(error.variable == "BROKER_API_KEY_SCOPES" && !"\(error)".contains(Self.reader), "\(bad)")
            }
        }
    }

    @Test func aReadOnlyKeyReadsButCannotDeleteProxyOrAdminister() async throws {
        let s = try Self.setUp()
        let id = try await s.connect(endUser: "t1-alice", user: "alice")
        #expect(await s.status(.GET, "/account?id=" + id, key: Self.reader).0 == 200)
        #expect(await s.status(.GET, "/accounts", key: Self.reader).0 == 200)
        for (method, target) in [
            (HTTPMethod.DELETE, "/account?id=" + id), (.GET, "/proxy/user"), (.GET, "/webhooks"), (.POST, "/backup"),
            (.POST, "/connect/sessions"),
        ] {
            let (status, error) = await s.status(method, target, key: Self.reader)
            #expect(status == 403 && error == "insufficient_permissions", "\(method) \(target)")
        }
        let refused = await s.broker.respond(.DELETE, "/account?id=" + id, headers: Self.bearer(Self.reader))
        #expect(String(decoding: refused.body, as: UTF8.self).contains("accounts:write"))
        // Still there: the refusal deleted nothing.
        #expect(await s.status(.GET, "/account?id=" + id, key: BrokerHarness.apiKey).0 == 200)
        // The audit trail names the key and, for a scoped key, the scope it used.
        #expect(s.broker.log.contains("\"caller\":\"reader\"") && s.broker.log.contains("\"scope\":\"tokens:read\""))
    }

    @Test func aKeyLimitedToProvidersOrEndUsersReachesNothingElse() async throws {
        let s = try Self.setUp()
        let alice = try await s.connect(endUser: "t1-alice", user: "alice")
        let bob = try await s.connect(endUser: "t2-bob", user: "bob")
        // jobs: the provider "other" only.
        #expect(await s.status(.GET, "/account?id=" + alice, key: Self.jobs) == (403, "insufficient_permissions"))
        #expect(await s.status(.GET, "/proxy/user", key: Self.jobs).0 == 400)  // no account named: past the scope check
        // tenant: end users t1-* only, every scope.
        #expect(await s.status(.GET, "/account?id=" + alice, key: Self.tenant).0 == 200)
        #expect(await s.status(.GET, "/account?id=" + bob, key: Self.tenant) == (403, "insufficient_permissions"))
        #expect(await s.status(.POST, "/account/refresh?id=" + bob, key: Self.tenant) == (403, "insufficient_permissions"))
        #expect(await s.status(.DELETE, "/account?id=" + bob, key: Self.tenant) == (403, "insufficient_permissions"))
        #expect(await s.status(.GET, "/account?id=" + bob, key: BrokerHarness.apiKey).0 == 200)
        // Listing must stay within the limits, which the filters say.
        #expect(await s.status(.GET, "/accounts", key: Self.tenant) == (403, "insufficient_permissions"))
        #expect(await s.status(.GET, "/accounts?end_user_id=t2-bob", key: Self.tenant) == (403, "insufficient_permissions"))
        let own = await s.broker.respond(.GET, "/accounts?end_user_id=t1-alice", headers: Self.bearer(Self.tenant))
        #expect(own.status.code == 200 && String(decoding: own.body, as: UTF8.self).contains(alice))
        #expect(await s.status(.GET, "/accounts", key: Self.jobs) == (403, "insufficient_permissions"))
        #expect(await s.status(.GET, "/accounts?provider=other", key: Self.jobs) == (403, "insufficient_permissions"))
        // Starting sign-ins: only for its own end users.
        let forOther = "{\"provider\":\"acme\",\"end_user_id\":\"t2-carol\"}"
        #expect(await s.status(.POST, "/authorize", key: Self.tenant, body: forOther) == (403, "insufficient_permissions"))
        #expect(await s.status(.POST, "/authorize", key: Self.tenant, body: "{\"provider\":\"acme\"}") == (403, "insufficient_permissions"))
        #expect(
            await s.status(.POST, "/authorize", key: Self.tenant, body: "{\"provider\":\"acme\",\"end_user_id\":\"t1-carol\"}").0 == 200)
        let session = "{\"end_user_id\":\"t2-carol\",\"origin\":\"https://app.example.com\"}"
        #expect(await s.status(.POST, "/connect/sessions", key: Self.tenant, body: session) == (403, "insufficient_permissions"))
        let renew = "{\"end_user_id\":\"t1-alice\",\"origin\":\"https://app.example.com\",\"account_id\":\"\(bob)\"}"
        #expect(await s.status(.POST, "/connect/sessions", key: Self.tenant, body: renew) == (403, "insufficient_permissions"))
    }

    @Test func aGrantHoldsExactlyItsScopesAlsoAfterAChange() {
        for scope in APIKeyScope.allCases {
            var grant = KeyGrant(scopes: [scope])
            for other in APIKeyScope.allCases {
                #expect(((try? grant.require(other)) != nil) == (other == scope))
            }
            grant.scopes.insert(.admin)
            #expect((try? grant.require(.admin)) != nil)
            grant.scopes = []
            #expect((try? grant.require(scope)) == nil)
        }
        #expect(KeyGrant.all.isUnrestricted)
        #expect(KeyGrant(scopes: Set(APIKeyScope.allCases)) == .all)
    }
}
