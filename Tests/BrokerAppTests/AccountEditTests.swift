import BrokerCore
import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// `PATCH /account`: a back end changes an account's end user and tags without a new sign-in; the change is stored,
/// shows in `/accounts` filters, and goes to the webhooks as `account.updated`.
@Suite(.scoped) struct AccountEditTests {
    static let api = [("Authorization", "Bearer " + BrokerHarness.apiKey), ("Content-Type", "application/json")]

    struct Setup {
        let broker: BrokerHarness
        let receiver: WebhookReceiver

        func send(_ method: String, _ target: String, _ body: String = "", key: String = BrokerHarness.apiKey) async throws
            -> TestHTTP.Reply
        {
            try #require(
                await TestHTTP.send(
                    port: broker.port, method: method, target: target,
                    headers: [("Authorization", "Bearer " + key), ("Content-Type", "application/json")], body: body))
        }
    }

    static let tenant = "tenant-key-0123456789abcdef0123456789"

    /// A broker with one `bearer` provider (no verification) and the account `bearerp:team-1` of end user `t1-a`.
    static func setUp() async throws -> Setup {
        let receiver = try WebhookReceiver()
        TestScope.required("a webhook receiver")?.onEnd { await receiver.stop() }
        let broker = try BrokerHarness(
            providersJSON: #"{"providers": {"bearerp": {"auth": "bearer", "api_base_url": "https://api.example.com"}}}"#,
            environment: [
                "BROKER_WEBHOOK_URL": receiver.url, "BROKER_WEBHOOK_SECRET": "whsec-edit-tests-0123456789abcdef",
                "BROKER_WEBHOOK_RETRY_BASE": "0.1", "BROKER_WEBHOOK_RETRY_CAP": "0.4",
                "BROKER_API_KEYS": "tenant:\(tenant)", "BROKER_API_KEY_SCOPES": "tenant=all end_user:t1-*",
            ])
        let s = Setup(broker: broker, receiver: receiver)
        let created = try await s.send(
            "POST", "/accounts",
            #"{"provider":"bearerp","uid":"team-1","end_user_id":"t1-a","tags":{"plan":"free"},"credentials":{"token":"tok-1"}}"#)
        #expect(created.status == 201, "\(created.body)")
        return s
    }

    static func json(_ body: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
    }

    @Test func tagsAndEndUserChangeWithoutASignInAndTheWebhookSaysSo() async throws {
        let s = try await Self.setUp()
        let edited = try await s.send(
            "PATCH", "/account?id=bearerp:team-1", #"{"tags":{"plan":"pro","region":"eu"},"end_user_id":"t1-b","end_user_name":"Ada"}"#)
        #expect(edited.status == 200, "\(edited.body)")
        let summary = Self.json(edited.body)
        #expect(summary["end_user_id"] as? String == "t1-b" && summary["end_user_name"] as? String == "Ada")
        #expect(summary["tags"] as? [String: String] == ["plan": "pro", "region": "eu"])
        let found = try await s.send("GET", "/accounts?tag=plan:pro&end_user_id=t1-b")
        #expect(found.body.contains("bearerp:team-1"), "\(found.body)")
        // Tags alone leave the end user as it is; the token is untouched.
        #expect(try await s.send("PATCH", "/account?id=bearerp:team-1", #"{"tags":{}}"#).status == 200)
        let account = Self.json(try await s.send("GET", "/account?id=bearerp:team-1").body)
        #expect(account["end_user_id"] as? String == "t1-b" && (account["tags"] as? [String: String])?.isEmpty == true)
        #expect(account["access_token"] as? String == "tok-1")
        #expect(await eventually { s.receiver.received.filter { $0.type == "account.updated" }.count == 2 })
        // Delivery order is not promised (a retried delivery can come after a later event): one of the two carries the
        // first edit's tags, and neither carries the token.
        let updates = s.receiver.received.filter { $0.type == "account.updated" }
        #expect(updates.contains { $0.data("tags") as? [String: String] == ["plan": "pro", "region": "eu"] })
        #expect(updates.allSatisfy { !String(decoding: $0.body, as: UTF8.self).contains("tok-1") })
    }

    @Test(arguments: [
        ("/account?id=bearerp:team-1", #"{"tag":"x"}"#, 400, "Unknown field"),
        ("/account?id=bearerp:team-1", "{}", 400, "Give end_user_id, tags or metadata"),
        ("/account?id=bearerp:team-1", #"{"metadata":[1,2]}"#, 400, "metadata must be a JSON object"),
        ("/account?id=bearerp:team-1", #"{"metadata":"x"}"#, 400, "metadata must be a JSON object"),
        (
            "/account?id=bearerp:team-1", #"{"metadata":{"blob":""# + String(repeating: "a", count: 16 * 1024) + #""}}"#, 400,
            "at most 16384"
        ),
        ("/account?id=bearerp:team-1", #"{"tags":{"plan":7}}"#, 400, "tags must be an object"),
        ("/account?id=bearerp:nobody", #"{"tags":{}}"#, 404, "not_found"),
    ])
    func aBadEditChangesNothing(target: String, body: String, status: Int, expected: String) async throws {
        let s = try await Self.setUp()
        let reply = try await s.send("PATCH", target, body)
        #expect(reply.status == status && reply.body.contains(expected), "\(reply.body)")
        let account = Self.json(try await s.send("GET", "/account?id=bearerp:team-1").body)
        #expect(account["tags"] as? [String: String] == ["plan": "free"])
    }

    @Test func metadataIsStoredShownInEveryListingAndCarriedByTheWebhook() async throws {
        let s = try await Self.setUp()
        let edited = try await s.send(
            "PATCH", "/account?id=bearerp:team-1", #"{"metadata":{"crm":{"id":42,"ok":true},"notes":["a","b"],"ratio":0.5}}"#)
        #expect(edited.status == 200, "\(edited.body)")
        let expected = JSONValue(Self.json(#"{"crm":{"id":42,"ok":true},"notes":["a","b"],"ratio":0.5}"#))
        func same(_ value: Any?) -> Bool { value.map(JSONValue.init) == expected }
        #expect(same(Self.json(edited.body)["metadata"]), "\(edited.body)")
        #expect(edited.body.contains(#""metadata":{"crm":{"id":42,"ok":true},"notes":["a","b"],"ratio":0.5}"#), "\(edited.body)")
        #expect(same(Self.json(try await s.send("GET", "/account?id=bearerp:team-1").body)["metadata"]))
        let listed = Self.json(try await s.send("GET", "/accounts").body)
        let first = (listed["accounts"] as? [[String: Any]])?.first
        #expect(same(first?["metadata"]), "\(listed)")
        #expect(await eventually { s.receiver.received.contains { $0.type == "account.updated" } })
        let update = try #require(s.receiver.received.first { $0.type == "account.updated" })
        #expect(same(update.data("metadata")))
        // Tags alone keep the metadata; `{}` clears it.
        #expect(try await s.send("PATCH", "/account?id=bearerp:team-1", #"{"tags":{"plan":"pro"}}"#).status == 200)
        #expect(same(Self.json(try await s.send("GET", "/account?id=bearerp:team-1").body)["metadata"]))
        #expect(try await s.send("PATCH", "/account?id=bearerp:team-1", #"{"metadata":{}}"#).status == 200)
        #expect(Self.json(try await s.send("GET", "/account?id=bearerp:team-1").body)["metadata"] == nil)
    }

    /// A new sign-in to the same account replaces its tokens and keeps what the back end set on it: the metadata of
    /// `PATCH /account` is not lost to a reconnect.
    @Test func aReconnectKeepsTheMetadata() async throws {
        let s = try await WebhookEndToEndTests.setUp()
        #expect(await s.connect() == 200)
        let edited = try #require(
            await TestHTTP.send(
                port: s.broker.port, method: "PATCH", target: "/account?id=acme:4242",
                headers: Self.api, body: #"{"metadata":{"crm":7}}"#))
        #expect(edited.status == 200, "\(edited.body)")
        let before = Self.json(try #require(await s.get("/account?id=acme:4242")).body)
        #expect(await s.connect() == 200)
        let after = Self.json(try #require(await s.get("/account?id=acme:4242")).body)
        #expect(after["access_token"] as? String != before["access_token"] as? String, "the reconnect stored a new token")
        #expect((after["metadata"] as? [String: Any])?["crm"] as? Int == 7, "\(after)")
    }

    @Test func aKeyLimitedToSomeEndUsersMovesNoAccountOutOfItsLimits() async throws {
        let s = try await Self.setUp()
        let moved = try await s.send("PATCH", "/account?id=bearerp:team-1", #"{"end_user_id":"t2-x"}"#, key: Self.tenant)
        #expect(moved.status == 403, "\(moved.body)")
        let cleared = try await s.send("PATCH", "/account?id=bearerp:team-1", #"{"end_user_id":""}"#, key: Self.tenant)
        #expect(cleared.status == 403, "\(cleared.body)")
        #expect(try await s.send("PATCH", "/account?id=bearerp:team-1", #"{"end_user_id":"t1-c"}"#, key: Self.tenant).status == 200)
    }
}
