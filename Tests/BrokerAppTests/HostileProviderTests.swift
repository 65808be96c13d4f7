import BrokerCore
import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// A provider that answers with values meant to hurt: real sockets to the broker and to an in-process OAuth 2.0
/// provider; the broker must survive, answer `/healthz`, refuse what it cannot hold, and keep what it stored.
@Suite(.scoped) struct HostileProviderTests {
    static let clientSecret = "ACME-CLIENT-SECRET-SENTINEL-0123456789"
    static let api = [("Authorization", "Bearer " + BrokerHarness.apiKey)]
    static let now = Date(timeIntervalSince1970: 1_796_025_600)

    struct Setup {
        let provider: FakeOAuth2Provider
        let broker: BrokerHarness
        var browser: Browser { Browser(brokerPort: broker.port, providerPort: provider.port) }

        func connect() async -> TestHTTP.Reply? { await browser.connect(provider: "acme") }
        func read(uid: String, headers: [(String, String)] = HostileProviderTests.api) async -> TestHTTP.Reply? {
            await TestHTTP.send(port: broker.port, target: "/account?id=" + HostileProviderTests.escaped("acme:" + uid), headers: headers)
        }
        func healthy() async -> Bool { await TestHTTP.send(port: broker.port, target: "/healthz")?.status == 200 }
        func accountCount() async -> Int? {
            guard let body = await TestHTTP.send(port: broker.port, target: "/accounts", headers: HostileProviderTests.api)?.body else {
                return nil
            }
            return body.components(separatedBy: "\"uid\":").count - 1
        }
    }

    /// A broker on a fixed clock and data directory (pass the same one to simulate a restart).
    static func setUp(dataDirectory: String? = nil, provider existing: FakeOAuth2Provider? = nil) throws -> Setup {
        let provider = try existing ?? FakeOAuth2Provider.scoped(.rfc6749(clientSecret: clientSecret))
        let broker = try BrokerHarness(
            providersJSON: "{\"providers\": {\(provider.providerEntry)}}",
            environment: ["FAKE_ACME_SECRET": clientSecret, "BROKER_REFRESH_INTERVAL": "0"],
            dataDirectory: dataDirectory, now: { now })
        return Setup(provider: provider, broker: broker)
    }

    static func escaped(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
    }

    static func tokenAnswer(expiresIn: String) -> String {
        "{\"access_token\":\"ACME-ACCESS-SENTINEL-{{n}}\",\"token_type\":\"bearer\",\"expires_in\":\(expiresIn)}"
    }

    static func field(_ body: String, _ name: String) -> String? {
        guard let range = body.range(of: "\"\(name)\":") else { return nil }
        let rest = body[range.upperBound...]
        if rest.hasPrefix("\"") { return String(rest.dropFirst().prefix { $0 != "\"" }) }
        return String(rest.prefix { $0 != "," && $0 != "}" })
    }

    // MARK: Numbers

    @Test(arguments: ["9223372036854775807", "\"9223372036854775807\"", "2147483647", "315360001"])
    func aLifetimeBeyondTenYearsIsClampedAndSurvivesARestart(expiresIn: String) async throws {
        let s = try Self.setUp()
        s.provider.set { $0.exchangeBody = Self.tokenAnswer(expiresIn: expiresIn) }
        #expect(await s.connect()?.status == 200)
        #expect(await s.healthy())
        let tenYears = RFC3339Date.format(Self.now.addingTimeInterval(315_360_000))
        let read = try #require(await s.read(uid: "4242"))
        #expect(read.status == 200)
        #expect(Self.field(read.body, "expires_at") == tenYears)
        await s.broker.stop()

        let restarted = try Self.setUp(dataDirectory: s.broker.dataDirectory, provider: s.provider)
        let again = try #require(await restarted.read(uid: "4242"))
        #expect(again.status == 200)
        #expect(Self.field(again.body, "expires_at") == tenYears)
    }

    @Test(arguments: ["-1", "-9223372036854775808", "99999999999999999999", "1e300", "1.5", "\"soon\"", "true"])
    func aLifetimeThatIsNoCountOfSecondsIsRefusedAndChangesNothing(expiresIn: String) async throws {
        let s = try Self.setUp()
        #expect(await s.connect()?.status == 200)
        let before = try #require(await s.read(uid: "4242"))
        s.provider.set { $0.exchangeBody = Self.tokenAnswer(expiresIn: expiresIn) }
        let refused = try #require(await s.connect())
        #expect(refused.status == 502)
        #expect(Self.field(refused.body, "error") == "upstream_error")
        #expect(refused.body.contains("expires_in"))
        #expect(!refused.body.contains("SENTINEL"))
        #expect(await s.healthy())
        let after = try #require(await s.read(uid: "4242"))
        #expect(after.status == 200)
        #expect(Self.field(after.body, "access_token") == Self.field(before.body, "access_token"))
        #expect(Self.field(after.body, "expires_at") == Self.field(before.body, "expires_at"))
    }

    // MARK: Identity

    @Test func userIDsThatSwiftCallsEqualAreTwoAccountsForTwoBrowsers() async throws {
        let s = try Self.setUp()
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        let alice = s.browser, mallory = s.browser
        s.provider.set { $0.userBody = "{\"id\":\"caf\\u00e9\"}" }
        #expect(await alice.connect(provider: "acme")?.status == 200)
        s.provider.set { $0.userBody = "{\"id\":\"cafe\\u0301\"}" }
        #expect(await mallory.connect(provider: "acme")?.status == 200)
        #expect(await s.accountCount() == 2)

        // Each browser reads its own account and not the other's, though Swift's String calls the ids equal.
        let own = try #require(await alice.get("/account?id=" + Self.escaped("acme:" + composed)))
        #expect(own.status == 200)
        let theirs = try #require(await mallory.get("/account?id=" + Self.escaped("acme:" + composed)))
        #expect(theirs.status == 401)
        let aliceToken = Self.field(own.body, "access_token")
        let malloryToken = Self.field(try #require(await s.read(uid: decomposed)).body, "access_token")
        #expect(aliceToken != nil && malloryToken != nil && aliceToken != malloryToken)

        // Deleting one leaves the other, and a restart brings back neither the deleted one nor a merged one.
        let deleted = await TestHTTP.send(
            port: s.broker.port, method: "DELETE",
            target: "/account?id=" + Self.escaped("acme:" + decomposed), headers: Self.api)
        #expect(deleted?.status == 204)
        await s.broker.stop()
        let restarted = try Self.setUp(dataDirectory: s.broker.dataDirectory, provider: s.provider)
        #expect(await restarted.read(uid: decomposed)?.status == 404)
        let kept = try #require(await restarted.read(uid: composed))
        #expect(kept.status == 200)
        #expect(Self.field(kept.body, "access_token") == aliceToken)
        #expect(await restarted.accountCount() == 1)
    }

    @Test(arguments: [
        String(repeating: "/", count: 128), String(repeating: "@", count: 128),
        String(repeating: "\u{E9}", count: 64), String(repeating: "\u{6F22}", count: 42),
    ])
    func theLongestUserIDsAreStored(uid: String) async throws {
        let s = try Self.setUp()
        let json = String(data: try JSONSerialization.data(withJSONObject: ["id": uid]), encoding: .utf8)!
        s.provider.set { $0.userBody = json }
        #expect(await s.connect()?.status == 200)
        #expect(await s.read(uid: uid)?.status == 200)
        await s.broker.stop()
        let restarted = try Self.setUp(dataDirectory: s.broker.dataDirectory, provider: s.provider)
        #expect(await restarted.read(uid: uid)?.status == 200)
    }

    @Test(arguments: [
        ("\"\\u202Eevil\"", "bidirectional"), ("\"a\\u0007b\"", "control"), ("\"a\\u0085b\"", "control"),
        ("\"" + String(repeating: "a", count: 129) + "\"", "longer than 128"), ("\"\"", "no id"),
    ])
    func aUserIDThatCannotBeShownOrStoredIsRefused(id: String, problem: String) async throws {
        let s = try Self.setUp()
        s.provider.set { $0.userBody = "{\"id\":\(id)}" }
        let refused = try #require(await s.connect())
        #expect(refused.status == 502)
        #expect(Self.field(refused.body, "error") == "upstream_error")
        #expect(refused.body.contains(problem))
        #expect(await s.healthy())
        #expect(await s.accountCount() == 0)
    }
}
