import BrokerCore
import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

#if canImport(Glibc)
import Glibc
#endif

/// `/proxy/<path>`: a caller names an account and the broker calls the provider's API with its credential, which the
/// caller never sees. The fake provider's resource server (`/_api/…`) stands for the provider's API.
@Suite(.scoped) struct ProxyTests {
    static let api = RefreshEndToEndTests.api
    static let account = [("Broker-Account", "acme:4242")]
    static let token = "ACME-ACCESS-SENTINEL-2"

    struct Setup {
        let provider: FakeOAuth2Provider
        let broker: BrokerHarness
        let clock: TestClock

        func call(
            _ method: String = "GET", _ path: String, headers: [(String, String)] = api + account, body: String = ""
        ) async throws -> TestHTTP.Reply {
            try #require(await TestHTTP.send(port: broker.port, method: method, target: path, headers: headers, body: body))
        }
    }

    /// A broker whose provider `acme` has its API on the fake (a private address, so allowed in the providers file),
    /// with one connected account.
    static func setUp(
        environment: [String: String] = [:], entryExtra: String = "",
        configure: @Sendable (inout FakeOAuth2Provider.Behaviour) -> Void = { _ in }
    ) async throws -> Setup {
        let provider = try FakeOAuth2Provider.scoped(.rfc6749(clientSecret: RefreshEndToEndTests.clientSecret))
        provider.set(configure)
        let clock = TestClock(Date())
        let entry = provider.providerEntry(extra: #""api_base_url": "\#(provider.apiBaseURL)", "api_allow_private": true"# + entryExtra)
        let broker = try BrokerHarness(
            providersJSON: "{\"providers\": {\(entry)}}",
            environment: ["FAKE_ACME_SECRET": RefreshEndToEndTests.clientSecret, "BROKER_REFRESH_INTERVAL": "0"]
                .merging(environment) { $1 },
            now: { clock.now })
        let connected = await Browser(brokerPort: broker.port, providerPort: provider.port).connect(provider: "acme")
        #expect(connected?.status == 200)
        return Setup(provider: provider, broker: broker, clock: clock)
    }

    /// The JSON string array pairs of the echo's `headers`, as (name, value).
    static func echoedHeaders(_ body: String) -> [(String, String)] {
        guard let data = body.data(using: .utf8), let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let pairs = object["headers"] as? [[String]]
        else { return [] }
        return pairs.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }
    }

    @Test func aCallReachesTheAPIWithTheAccountsTokenAndNoneOfTheCallersSecrets() async throws {
        let s = try await Self.setUp()
        let headers =
            Self.api + Self.account + [
                ("Cookie", "broker_session=abc"), ("Connection", "X-Private"), ("X-Private", "1"), ("X-Custom", "kept"),
                ("Content-Type", "text/plain"),
            ]
        let reply = try await s.call("POST", "/proxy/echo/items?limit=5&q=a%20b", headers: headers, body: "hello")
        #expect(reply.status == 200)
        let echoed = Self.echoedHeaders(reply.body)
        #expect(reply.body.contains(#""method":"POST""#))
        #expect(reply.body.contains(#""path":"/_api/echo/items""#))
        #expect(reply.body.contains(#""query":"limit=5&q=a%20b""#))
        #expect(reply.body.contains(#""bytes":5"#))
        #expect(echoed.filter { $0.0.lowercased() == "authorization" }.map(\.1) == ["Bearer " + Self.token])
        #expect(echoed.contains { $0 == ("X-Custom", "kept") })
        for dropped in ["cookie", "x-private", "broker-account", "connection"] {
            #expect(!echoed.contains { $0.0.lowercased() == dropped }, "\(dropped) reached the provider")
        }
        #expect(!reply.body.contains(BrokerHarness.apiKey), "the broker's API key reached the provider")
        // What comes back: the provider's own fields, but not its cookie or hop-by-hop fields, and never the token.
        #expect(reply.header("X-API") == "fake")
        #expect(reply.header("Set-Cookie") == nil && reply.header("X-Hop") == nil)
        #expect(reply.header("Broker-Account") == "acme:4242")
        #expect(!reply.headers.contains { $0.1.contains(Self.token) })
        #expect(!s.broker.log.contains(Self.token))
        #expect(s.provider.ledger.apiCalls == 1)
    }

    /// RFC 9110 §6.6.1: `Date` is a singleton, so the answer carries the broker's alone; `X-Request-Id` is the broker's
    /// (the id its logs and audit trail name), and the provider's comes back as `Provider-Request-Id`.
    @Test func theAnswerCarriesOneDateOneRequestIDAndTheProvidersIDUnderItsOwnName() async throws {
        let s = try await Self.setUp()
        // The caller's id is the broker's, and goes on to the fake, whose server keeps it as its own too.
        let traced = try await s.call("GET", "/proxy/echo", headers: Self.api + Self.account + [("X-Request-Id", "caller-trace-7")])
        #expect(traced.status == 200)
        func values(_ reply: TestHTTP.Reply, _ name: String) -> [String] {
            reply.headers.filter { $0.0.lowercased() == name.lowercased() }.map(\.1)
        }
        #expect(values(traced, "Date").count == 1)
        #expect(values(traced, "X-Request-Id") == ["caller-trace-7"])
        #expect(values(traced, "Provider-Request-Id") == ["caller-trace-7"])
        // Without one, the broker and the fake each make their own: two different ids, each under its name once.
        let plain = try await s.call("GET", "/proxy/echo")
        #expect(values(plain, "Date").count == 1)
        let ours = try #require(values(plain, "X-Request-Id").first)
        let theirs = values(plain, "Provider-Request-Id")
        #expect(values(plain, "X-Request-Id").count == 1 && theirs.count == 1 && theirs != [ours])
        let line = try #require(s.broker.log.split(separator: "\n").last { $0.contains(#""event":"proxy_call""#) })
        #expect(line.contains(#""request_id":"\#(ours)""#))
    }

    /// `api_token_header`/`api_token_format` (Shopify's `X-Shopify-Access-Token`): the token arrives in the declared
    /// field, formatted, and no `Authorization` is sent, not even the caller's; the user endpoint keeps Bearer here
    /// because `user_auth_scheme` says so.
    @Test func aProviderDeclaredHeaderCarriesTheTokenAndNoAuthorizationIsSent() async throws {
        let s = try await Self.setUp(
            entryExtra: #", "api_token_header": "X-Fake-Access-Token", "api_token_format": "{access_token}", "user_auth_scheme": "Bearer""#)
        let reply = try await s.call(
            "GET", "/proxy/echo/shop.json", headers: Self.api + Self.account + [("Authorization", "Bearer caller-own")])
        #expect(reply.status == 200)
        let echoed = Self.echoedHeaders(reply.body)
        #expect(echoed.filter { $0.0.lowercased() == "x-fake-access-token" }.map(\.1) == [Self.token])
        #expect(!echoed.contains { $0.0.lowercased() == "authorization" }, "an Authorization field reached the provider")
        #expect(reply.header("X-Fake-Access-Token") == nil)
    }

    @Test func aCallIsAnAuditEntryAndAMetricWithoutItsQueryOrToken() async throws {
        let s = try await Self.setUp()
        _ = try await s.call("GET", "/proxy/echo/report?secret_query=1")
        let log = s.broker.log
        let line = try #require(log.split(separator: "\n").first { $0.contains(#""event":"proxy_call""#) })
        for part in [
            #""account":"acme:4242""#, #""method":"GET""#, #""host":"127.0.0.1""#, #""path":"/echo/report""#,
            #""status":200"#, #""outcome":"ok""#, #""bytes_sent":0"#,
        ] {
            #expect(line.contains(part), "\(part) missing in \(line)")
        }
        #expect(!line.contains("secret_query") && !log.contains(Self.token))
        let metrics = try await s.call("GET", "/metrics", headers: Self.api)
        #expect(metrics.body.contains(#"broker_proxy_requests_total{provider="acme",class="2xx"} 1"#))
        #expect(metrics.body.contains(#"broker_proxy_upstream_seconds_count{provider="acme"} 1"#))
    }

    @Test func aRevokedTokenIsRefreshedOnceAndEveryConcurrentCallSucceeds() async throws {
        let s = try await Self.setUp()
        s.provider.revokeAccessToken(Self.token)
        let statuses = await withTaskGroup(of: Int?.self) { group in
            for i in 0..<20 {
                group.addTask { try? await s.call("POST", "/proxy/echo/\(i)", body: "call \(i)").status }
            }
            return await group.reduce(into: [Int?]()) { $0.append($1) }
        }
        #expect(statuses.count == 20 && statuses.allSatisfy { $0 == 200 }, "\(statuses)")
        #expect(s.provider.refreshCalls == 1)
        let refusals = s.provider.ledger.apiRefusals
        #expect(refusals >= 1)
        // Every call the provider refused went on with the renewed token.
        let metrics = try await s.call("GET", "/metrics", headers: Self.api)
        #expect(metrics.body.contains(#"broker_proxy_renewed_tokens_total{provider="acme"} \#(refusals)"#))
    }

    @Test func aRefusedCallWhoseBodyWasNotKeptComesBackWithBrokerRefreshed() async throws {
        let s = try await Self.setUp()
        s.provider.revokeAccessToken(Self.token)
        let big = String(repeating: "x", count: (1 << 20) + 1)
        let refused = try await s.call("PUT", "/proxy/echo/upload", body: big)
        #expect(refused.status == 401)
        #expect(refused.header("Broker-Refreshed") == "true")
        #expect(refused.body.contains("Bad credentials"))
        #expect(s.provider.refreshCalls == 1)
        // The caller's retry goes out with the new token.
        let again = try await s.call("PUT", "/proxy/echo/upload", body: big)
        #expect(again.status == 200 && again.body.contains(#""bytes":1048577"#))
        #expect(s.provider.refreshCalls == 1)
    }

    @Test func aRateLimitComesBackAtOnceWithItsRetryAfter() async throws {
        let s = try await Self.setUp()
        let reply = try await s.call("GET", "/proxy/limited")
        #expect(reply.status == 429)
        #expect(reply.header("Retry-After") == "3600")
        #expect(s.provider.ledger.apiCalls == 1)
        #expect(s.provider.refreshCalls == 0)
    }

    @Test func aRedirectIsPassedBackNotFollowed() async throws {
        let s = try await Self.setUp()
        let reply = try await s.call("GET", "/proxy/redirect")
        #expect(reply.status == 302)
        #expect(reply.header("Location") == "http://127.0.0.2:9/elsewhere")
        #expect(s.provider.ledger.apiCalls == 1)
    }

    @Test func anAccountThatNeedsReauthorizationIs410WithoutACall() async throws {
        let s = try await Self.setUp { $0.refreshFailure = .invalidGrant }
        s.clock.advance(3500)
        let reply = try await s.call("GET", "/proxy/echo")
        #expect(reply.status == 410 && reply.body.contains(#""error":"reauthorization_required""#))
        let again = try await s.call("GET", "/proxy/echo")
        #expect(again.status == 410)
        #expect(s.provider.ledger.apiCalls == 0)
    }

    @Test func onlyTheAPIKeyMayCallAndTheAccountMustBeNamed() async throws {
        let s = try await Self.setUp()
        let anonymous = try await s.call("GET", "/proxy/echo", headers: Self.account)
        #expect(anonymous.status == 401)
        let unnamed = try await s.call("GET", "/proxy/echo", headers: Self.api)
        #expect(unnamed.status == 400)
        // The query goes to the provider: it cannot name the account.
        let byQuery = try await s.call("GET", "/proxy/echo?id=acme:4242", headers: Self.api)
        #expect(byQuery.status == 400)
        let unknown = try await s.call("GET", "/proxy/echo", headers: Self.api + [("Broker-Account", "acme:nobody")])
        #expect(unknown.status == 404)
        #expect(s.provider.ledger.apiCalls == 0)
    }

    @Test(arguments: [
        "/proxy/../user", "/proxy/%2e%2e/user", "/proxy/a/%2E%2E/user", "/proxy//evil.example/x", "/proxy/a%2Fb",
        "/proxy/a%5Cb", "/proxy/x?y=%0d%0a",
    ])
    func aPathThatWouldLeaveTheAPIIsRefusedWithoutACall(path: String) async throws {
        let s = try await Self.setUp()
        let reply = try await s.call("GET", path)
        #expect(reply.status == 400, "\(path): \(reply.status) \(reply.body)")
        #expect(s.provider.ledger.apiCalls == 0)
    }

    @Test func aProviderWithoutAnAPIBaseIs503() async throws {
        let provider = try FakeOAuth2Provider.scoped(.rfc6749(clientSecret: RefreshEndToEndTests.clientSecret))
        let broker = try BrokerHarness(
            providersJSON: "{\"providers\": {\(provider.providerEntry)}}",
            environment: ["FAKE_ACME_SECRET": RefreshEndToEndTests.clientSecret])
        _ = await Browser(brokerPort: broker.port, providerPort: provider.port).connect(provider: "acme")
        let reply = try #require(
            await TestHTTP.send(port: broker.port, target: "/proxy/echo", headers: Self.api + Self.account))
        #expect(reply.status == 503 && reply.body.contains("api_base_url"))
    }

    @Test func aHostOnAPrivateAddressIsRefusedWithoutAConnectionUnlessAllowed() async throws {
        // A listener standing for an internal service on loopback: the proxy must never connect to it.
        let listener = try LoopbackListener()
        let provider = try FakeOAuth2Provider.scoped(.rfc6749(clientSecret: RefreshEndToEndTests.clientSecret))
        let entry = provider.providerEntry(extra: #""api_base_url": "https://127.0.0.1:\#(listener.port)/v1""#)
        let broker = try BrokerHarness(
            providersJSON: "{\"providers\": {\(entry)}}",
            environment: ["FAKE_ACME_SECRET": RefreshEndToEndTests.clientSecret])
        _ = await Browser(brokerPort: broker.port, providerPort: provider.port).connect(provider: "acme")
        let reply = try #require(
            await TestHTTP.send(port: broker.port, target: "/proxy/anything", headers: Self.api + Self.account))
        #expect(reply.status == 502 && reply.body.contains("private or special-purpose address"))
        #expect(listener.acceptedCount() == 0, "the proxy opened a connection to a private address")
        // http:// is refused unless the file allows the private host.
        let plain = provider.providerEntry(extra: #""api_base_url": "http://127.0.0.1:\#(listener.port)/v1""#)
        #expect(throws: (any Error).self) {
            _ = try BrokerHarness(
                providersJSON: "{\"providers\": {\(plain)}}",
                environment: ["FAKE_ACME_SECRET": RefreshEndToEndTests.clientSecret], listen: false)
        }
    }

    @Test func serverSentEventsPassThroughAsTheyArrive() async throws {
        let s = try await Self.setUp()
        let client = try RawClient(port: s.broker.port)
        client.send(
            "GET /proxy/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(BrokerHarness.apiKey)\r\n"
                + "Broker-Account: acme:4242\r\n\r\n")
        s.provider.events.push("one")
        #expect(await offPool { client.blockingRead(until: Array("data: one\n\n".utf8)) })
        #expect(!String(decoding: client.unread, as: UTF8.self).contains("two"))
        s.provider.events.push("two")
        s.provider.events.push(nil)
        #expect(await offPool { client.blockingRead(until: Array("data: two\n\n\r\n0\r\n\r\n".utf8)) })
        #expect(String(decoding: client.unread, as: UTF8.self).contains("text/event-stream"))
    }
}
