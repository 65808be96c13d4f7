import BrokerCore
import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// `/auth`, forward authentication: a gateway asks with the API key and an account, and gets the current token in
/// `Authorization` to put on the request it passes on.
@Suite(.scoped) struct ForwardAuthTests {
    typealias Setup = RefreshEndToEndTests.Setup
    static let api = RefreshEndToEndTests.api

    static func ask(
        _ port: Int, method: String = "GET", _ target: String = "/auth",
        headers: [(String, String)] = api + [("Broker-Account", "acme:4242")]
    ) async throws -> TestHTTP.Reply {
        try #require(await TestHTTP.send(port: port, method: method, target: target, headers: headers))
    }

    @Test func aGatewayGetsTheCurrentTokenInAHeaderForAnyMethodAndNoBody() async throws {
        let s = try await RefreshEndToEndTests.setUp()
        for method in ["GET", "POST", "DELETE", "PATCH"] {
            let reply = try await Self.ask(s.broker.port, method: method)
            #expect(reply.status == 200, "\(method)")
            #expect(reply.header("Authorization") == "Bearer ACME-ACCESS-SENTINEL-2", "\(method)")
            #expect(reply.header("Broker-Account") == "acme:4242")
            #expect(reply.header("Cache-Control") == "no-store")
            #expect(reply.body.isEmpty)
        }
        // Envoy's ext_authz appends the guarded path: the rest is ignored.
        let underAuth = try await Self.ask(s.broker.port, "/auth/reports/7?x=1")
        #expect(underAuth.status == 200 && underAuth.header("Authorization") == "Bearer ACME-ACCESS-SENTINEL-2")
        // The broker's own query may name it too, for gateways that cannot set a header per route.
        let byQuery = try await Self.ask(s.broker.port, "/auth?id=acme:4242", headers: Self.api)
        #expect(byQuery.header("Authorization") == "Bearer ACME-ACCESS-SENTINEL-2")
        #expect(s.provider.refreshCalls == 0)
    }

    @Test func aTokenThatIsDueIsRefreshedBeforeItIsHandedOn() async throws {
        let s = try await RefreshEndToEndTests.setUp()
        s.advance(3400)
        let reply = try await Self.ask(s.broker.port)
        #expect(reply.header("Authorization") == "Bearer ACME-ACCESS-SENTINEL-3")
        #expect(s.provider.refreshCalls == 1)
        #expect(try await Self.ask(s.broker.port).header("Authorization") == "Bearer ACME-ACCESS-SENTINEL-3")
        #expect(s.provider.refreshCalls == 1)
    }

    @Test func anAccountThatNeedsReauthorizationIs410AndTheProviderIsNotAskedAgain() async throws {
        let s = try await RefreshEndToEndTests.setUp { $0.refreshFailure = .invalidGrant }
        s.advance(3500)
        let first = try await Self.ask(s.broker.port)
        #expect(first.status == 410 && first.body.contains("\"error\":\"reauthorization_required\""))
        #expect(first.header("Authorization") == nil)
        let again = try await Self.ask(s.broker.port)
        #expect(again.status == 410)
        #expect(s.provider.refreshCalls == 1)
    }

    @Test func onlyTheAPIKeyMayAskNotTheBrowserThatConnectedTheAccount() async throws {
        let s = try await RefreshEndToEndTests.setUp()
        let account = [("Broker-Account", "acme:4242")]
        let browser = s.browser
        _ = await browser.connect(provider: "acme")
        let cookie = browser.jar.header
        for headers in [account, account + cookie, account + [("Authorization", "Bearer not-the-key-0123456789")]] {
            let reply = try await Self.ask(s.broker.port, headers: headers)
            #expect(reply.status == 401)
            #expect(reply.header("Authorization") == nil)
            #expect(!reply.body.contains("SENTINEL"))
        }
    }

    @Test func aBadOrMissingAccountNameIs400AndAnUnknownOne404() async throws {
        let s = try await RefreshEndToEndTests.setUp()
        let missing = try await Self.ask(s.broker.port, headers: Self.api)
        #expect(missing.status == 400 && missing.body.contains("Broker-Account"))
        let malformed = try await Self.ask(s.broker.port, headers: Self.api + [("Broker-Account", "no-colon")])
        #expect(malformed.status == 400)
        let unknown = try await Self.ask(s.broker.port, headers: Self.api + [("Broker-Account", "acme:9999")])
        #expect(unknown.status == 404)
        let badEndUser = try await Self.ask(
            s.broker.port, headers: Self.api + [("Broker-Provider", "acme"), ("Broker-End-User-ID", "caf\u{e9}")])
        #expect(badEndUser.status == 400 && badEndUser.body.contains("Broker-End-User-ID"))
    }

    @Test func anEndUserNamesTheirOneAccountAndTwoAreAmbiguous() async throws {
        let s = try EndUserEndToEndTests.setUp()
        let form = "application/x-www-form-urlencoded"
        #expect(try await EndUserEndToEndTests.connect(s, uid: "1001", type: form, body: "provider=weibo&end_user_id=user-42") == 200)
        let byUser = [("Broker-Provider", "weibo"), ("Broker-End-User-ID", "user-42")]
        let one = try await Self.ask(s.broker.port, headers: Self.api + byUser)
        #expect(one.status == 200 && one.header("Broker-Account") == "weibo:1001")
        let read = try #require(
            await TestHTTP.send(port: s.broker.port, target: "/account?id=weibo:1001", headers: Self.api))
        let token = try #require(EndUserEndToEndTests.json(read.body)["access_token"] as? String)
        #expect(one.header("Authorization") == "Bearer " + token)
        // The query form of the pair, as a gateway's auth URL carries it.
        let queried = try await Self.ask(s.broker.port, "/auth?provider=weibo&end_user_id=user-42", headers: Self.api)
        #expect(queried.header("Broker-Account") == "weibo:1001")
        let nobody = try await Self.ask(
            s.broker.port, headers: Self.api + [("Broker-Provider", "weibo"), ("Broker-End-User-ID", "user-7")])
        #expect(nobody.status == 404)

        #expect(try await EndUserEndToEndTests.connect(s, uid: "1002", type: form, body: "provider=weibo&end_user_id=user-42") == 200)
        let two = try await Self.ask(s.broker.port, headers: Self.api + byUser)
        #expect(two.status == 409 && two.body.contains("\"error\":\"ambiguous_account\""))
        #expect(two.header("Authorization") == nil)
        // Broker-Account still names either one.
        let named = try await Self.ask(s.broker.port, headers: Self.api + [("Broker-Account", "weibo:1002")] + byUser)
        #expect(named.header("Broker-Account") == "weibo:1002")
    }

    @Test func eachAnswerIsAnAuditEntryWithoutTheToken() async throws {
        let path = try TemporaryDirectory.scoped(prefix: "broker-forward-audit") + "/audit.jsonl"
        let s = try await RefreshEndToEndTests.setUp(environment: ["BROKER_AUDIT_LOG": path])
        _ = try await Self.ask(s.broker.port)
        _ = try await Self.ask(s.broker.port, headers: Self.api + [("Broker-Account", "acme:9999")])
        // Refused callers are handed nothing, so they leave no entry.
        _ = try await Self.ask(s.broker.port, headers: [("Broker-Account", "acme:4242")])
        await s.broker.stop()
        let events = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.filter { $0["event"] as? String == "token_forwarded" }
        #expect(events.count == 2)
        #expect(
            events.contains {
                $0["account"] as? String == "acme:4242" && $0["outcome"] as? String == "ok" && $0["caller"] as? String == "default"
            })
        #expect(events.contains { $0["account"] as? String == "acme:9999" && $0["outcome"] as? String == "not_found" })
        #expect(!(try String(contentsOfFile: path, encoding: .utf8)).contains("ACME-ACCESS-SENTINEL"))
        #expect(!s.broker.log.contains("ACME-ACCESS-SENTINEL"))
    }

    @Test func onlyABearerTokenOnOneLineIsHandedOn() throws {
        var account = Account.make(provider: "acme", uid: "1", accessToken: "token-1")
        #expect(try ForwardAuthHandler.authorization(for: account, kind: .oauth2) == "Bearer token-1")
        #expect(try ForwardAuthHandler.authorization(for: account, kind: .oidc) == "Bearer token-1")
        for kind in [ProviderKind.oauth1, .tmdb] {
            let error = #expect(throws: BrokerError.self) { try ForwardAuthHandler.authorization(for: account, kind: kind) }
            #expect(error?.code == "credential_not_forwardable" && error?.status == .conflict)
        }
        account.accessToken = Secret("token\r\nSet-Cookie: x=1")
        #expect(throws: BrokerError.self) { try ForwardAuthHandler.authorization(for: account, kind: .oauth2) }
    }
}
