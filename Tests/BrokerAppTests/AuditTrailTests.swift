import BrokerCore
import BrokerFakeProviders
import BrokerHTTP
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

#if canImport(Glibc)
import Glibc
#endif

/// `BROKER_AUDIT_LOG`: one JSON line per token hand-out, refresh, revocation, deletion and finished flow, naming the
/// caller and the request; mode 0600; never a token, code, key or secret.
@Suite(.scoped) struct AuditTrailTests {
    static let clientSecret = "AUDIT-CLIENT-SECRET-SENTINEL-0123456789"
    static let opsKey = "AUDIT-OPS-KEY-SENTINEL-0123456789abcdef"

    @Test func aFullFlowLeavesOneEventPerActionAndNoSecret() async throws {
        var configuration = FakeOAuth2Provider.Configuration.rfc6749(clientSecret: Self.clientSecret)
        configuration.names = .init(
            code: "AUDIT-CODE-SENTINEL-", access: "AUDIT-ACCESS-SENTINEL-", refresh: "AUDIT-REFRESH-SENTINEL-", random: true)
        configuration.pkce = .required
        var behaviour = FakeOAuth2Provider.Behaviour(dialect: .rfc6749)
        behaviour.users = .fixed("42")
        let acme = try FakeOAuth2Provider.scoped(configuration, behaviour: behaviour)
        let root = try TemporaryDirectory.scoped(prefix: "broker-audit")
        let path = root + "/audit.jsonl"
        let harness = try BrokerHarness(
            providersJSON: "{\"providers\": {\(acme.providerEntry(secretVariable: "ACME_SECRET"))}}",
            environment: ["ACME_SECRET": Self.clientSecret, "BROKER_API_KEYS": "ops:\(Self.opsKey)", "BROKER_AUDIT_LOG": path])
        let ops = [("Authorization", "Bearer " + Self.opsKey)]
        let browser = Browser(brokerPort: harness.port, providerPort: acme.port)
        #expect(await browser.connect(provider: "acme")?.status == 200)
        let read = await TestHTTP.send(port: harness.port, target: "/account?id=acme:42", headers: ops + [("X-Request-Id", "read-1")])
        #expect(read?.status == 200 && read?.header("X-Request-Id") == "read-1")
        #expect(await browser.get("/account?id=acme:42")?.status == 200)
        let refreshed = await TestHTTP.send(
            port: harness.port, method: "POST", target: "/account/refresh?id=acme:42", headers: ops + [("X-Request-Id", "refresh-1")])
        #expect(refreshed?.status == 200)
        // Refused callers are not handed anything, so they leave no event.
        #expect(
            await TestHTTP.send(port: harness.port, target: "/account?id=acme:42", headers: [("Authorization", "Bearer nope")])?.status
                == 401)
        let deleted = await TestHTTP.send(
            port: harness.port, method: "DELETE", target: "/account?id=acme:42", headers: ops + [("X-Request-Id", "delete-1")])
        #expect(deleted?.status == 204)
        await harness.stop()

        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let events = text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(events.count == text.split(separator: "\n").count)
        func event(_ name: String) -> [[String: Any]] { events.filter { $0["event"] as? String == name } }
        let flow = try #require(event("flow_completed").first)
        #expect(flow["caller"] as? String == "browser" && flow["account"] as? String == "acme:42" && flow["provider"] as? String == "acme")
        let reads = event("token_read")
        #expect(reads.count == 2)
        #expect(
            reads.contains {
                $0["caller"] as? String == "ops" && $0["request_id"] as? String == "read-1" && $0["outcome"] as? String == "ok"
            })
        #expect(reads.contains { $0["caller"] as? String == "browser" })
        #expect(event("token_refreshed").first?["request_id"] as? String == "refresh-1")
        let deletion = try #require(event("account_deleted").first)
        #expect(deletion["caller"] as? String == "ops" && deletion["request_id"] as? String == "delete-1")
        if acme.revokeCalls > 0 { #expect(event("account_revoked").first?["outcome"] as? String == "ok") }
        for e in events {
            #expect(e["ts"] is String && (e["request_id"] as? String)?.isEmpty == false, "\(e)")
        }
        // The same events are log lines too.
        #expect(harness.log.contains("\"event\":\"token_read\""))

        var sentinels = [Self.clientSecret, Self.opsKey, BrokerHarness.apiKey, "SENTINEL"]
        sentinels += acme.accessTokens + acme.ledger.verifiers
        sentinels += browser.jar.cookies.values.filter { $0.count > 16 }
        for sentinel in sentinels { #expect(!text.contains(sentinel), "the audit file holds \(sentinel.prefix(12))…") }
    }

    @Test func eventsAboutAnAccountNameTheEndUserItBelongsTo() async throws {
        var behaviour = FakeOAuth2Provider.Behaviour(dialect: .rfc6749)
        behaviour.users = .fixed("7")
        let acme = try FakeOAuth2Provider.scoped(.rfc6749(clientSecret: Self.clientSecret), behaviour: behaviour)
        let root = try TemporaryDirectory.scoped(prefix: "broker-audit")
        let path = root + "/audit.jsonl"
        let harness = try BrokerHarness(
            providersJSON: "{\"providers\": {\(acme.providerEntry(secretVariable: "ACME_SECRET"))}}",
            environment: ["ACME_SECRET": Self.clientSecret, "BROKER_API_KEYS": "ops:\(Self.opsKey)", "BROKER_AUDIT_LOG": path])
        let ops = [("Authorization", "Bearer " + Self.opsKey)]
        // A back end starts the flow for its user 42; the browser only follows the link.
        let started = try #require(
            await TestHTTP.send(
                port: harness.port, method: "POST", target: "/authorize",
                headers: ops + [("Content-Type", "application/x-www-form-urlencoded")], body: "provider=acme&end_user_id=user-42"))
        #expect(started.status == 200)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(started.body.utf8)) as? [String: Any])
        let browser = Browser(brokerPort: harness.port, providerPort: acme.port)
        let authorizeURL = try #require(json["authorize_url"] as? String)
        let callback = try #require(await browser.visitProvider(authorizeURL))
        let connected = try #require(await browser.get(callback))
        #expect(connected.status == 200)
        let id = "acme:7"
        #expect(await TestHTTP.send(port: harness.port, target: "/account?id=" + id, headers: ops)?.status == 200)
        await harness.stop()

        let events = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let read = try #require(events.first { $0["event"] as? String == "token_read" })
        #expect(read["end_user"] as? String == "user-42" && read["account"] as? String == id)
    }

    @Test func anUnopenableAuditLogStopsStartNamingTheVariable() throws {
        #expect(
            throws: ConfigurationError(
                variable: "BROKER_AUDIT_LOG", message: "cannot open /nonexistent-dir/audit: No such file or directory")
        ) {
            _ = try AuditLogFile(path: "/nonexistent-dir/audit")
        }
    }

    @Test func eventsReachTheFileWithinAFlushAndAfterClose() async throws {
        let root = try TemporaryDirectory.scoped(prefix: "audit-file")
        let file = try AuditLogFile(path: root + "/a.jsonl")
        file.append("{\"n\":1}")
        // The background flush writes without being asked.
        let written = await eventually(timeout: 10) { (try? String(contentsOfFile: root + "/a.jsonl", encoding: .utf8)) == "{\"n\":1}\n" }
        #expect(written)
        file.append("{\"n\":2}")
        file.close()
        file.append("{\"n\":3}")
        #expect(try String(contentsOfFile: root + "/a.jsonl", encoding: .utf8) == "{\"n\":1}\n{\"n\":2}\n")
    }
}
