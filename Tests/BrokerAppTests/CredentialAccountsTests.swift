import BrokerCore
import BrokerCrypto
import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// Accounts of `api_key`, `basic` and `bearer` providers end to end: entered with `POST /accounts`, verified at the
/// fake provider over real HTTP before they are stored, read back with `GET /account`, and placed on proxied calls as
/// each provider declares; a credential the provider refuses is `422` with nothing stored, and no value shows in
/// `/accounts`, the broker's log, the audit lines or the webhooks.
@Suite(.scoped) struct CredentialAccountsTests {
    static let api = [("Authorization", "Bearer " + BrokerHarness.apiKey), ("Content-Type", "application/json")]
    static let apiKey = "SENTINEL-APIKEY-0f3a9c"
    static let token = "SENTINEL-TOKEN-77b1e2"
    static let username = "ada"
    static let password = "SENTINEL-PASS word:9"
    /// Every value a test enters, none of which may show where it does not belong.
    static let secrets = [apiKey, token, password, Base64.encode(Array("\(username):\(password)".utf8))]

    /// One provider of each placement, all on the fake.
    enum Kind: String, CaseIterable, Sendable {
        case keyHeader = "keyhdr"
        case keyQuery = "keyqry"
        case basic = "basicp"
        case bearer = "bearerp"

        /// The `credentials` member that the fake accepts.
        var credentials: String {
            switch self {
            case .keyHeader, .keyQuery: #"{"api_key":"\#(CredentialAccountsTests.apiKey)"}"#
            case .basic: #"{"username":"\#(CredentialAccountsTests.username)","password":"\#(CredentialAccountsTests.password)"}"#
            case .bearer: #"{"token":"\#(CredentialAccountsTests.token)"}"#
            }
        }

        /// The same with a value the fake refuses.
        var wrongCredentials: String {
            switch self {
            case .keyHeader, .keyQuery: #"{"api_key":"not-the-key"}"#
            case .basic: #"{"username":"ada","password":"not-the-password"}"#
            case .bearer: #"{"token":"not-the-token"}"#
            }
        }

        /// The uid the account gets: the verification answer's user, the user name, or the digest.
        var expectedUID: String? {
            switch self {
            case .keyHeader: FakeCredentialProvider.userID
            case .basic: CredentialAccountsTests.username
            case .keyQuery, .bearer: nil
            }
        }
    }

    struct Setup {
        let fake: FakeCredentialProvider
        let broker: BrokerHarness
        let receiver: WebhookReceiver
        /// `BROKER_AUDIT_LOG`.
        let auditPath: String

        /// The audit file's lines so far.
        var audit: String { (try? String(contentsOfFile: auditPath, encoding: .utf8)) ?? "" }

        func post(_ target: String, _ body: String, headers: [(String, String)] = CredentialAccountsTests.api) async throws
            -> TestHTTP.Reply
        {
            try #require(await TestHTTP.send(port: broker.port, method: "POST", target: target, headers: headers, body: body))
        }

        func get(_ target: String, headers: [(String, String)] = []) async throws -> TestHTTP.Reply {
            try #require(await TestHTTP.send(port: broker.port, target: target, headers: CredentialAccountsTests.api + headers))
        }

        /// Fails when any entered value shows in `/accounts`, the log (audit lines included), a webhook or `replies`.
        func expectNoSecretLeaked(_ replies: [TestHTTP.Reply] = []) async throws {
            let listing = try await get("/accounts")
            #expect(listing.status == 200)
            let log = broker.log
            let hooks = receiver.received.map { String(decoding: $0.body, as: UTF8.self) }.joined(separator: "\n")
            let audit = self.audit
            // Sealed with BROKER_ENCRYPTION_KEY: no value is readable in the data directory either.
            let stored = broker.dataDirectoryText()
            for secret in CredentialAccountsTests.secrets {
                #expect(!audit.contains(secret), "an audit line shows a secret")
                #expect(!stored.contains(secret), "the data directory shows a secret")
                #expect(!listing.body.contains(secret), "/accounts shows a secret")
                #expect(!log.contains(secret), "the log shows a secret")
                #expect(!hooks.contains(secret), "a webhook shows a secret")
                for reply in replies { #expect(!reply.body.contains(secret), "an answer shows a secret: \(reply.body)") }
            }
        }
    }

    static func setUp(environment extra: [String: String] = [:]) async throws -> Setup {
        let fake = try FakeCredentialProvider.scoped(apiKey: apiKey, token: token, username: username, password: password)
        let receiver = try WebhookReceiver()
        TestScope.required("a webhook receiver")?.onEnd { await receiver.stop() }
        let base = fake.baseURL
        let auditPath = try TemporaryDirectory.scoped(prefix: "credential-audit") + "/audit.jsonl"
        let providers = """
            {"providers": {
              "keyhdr": {"auth": "api_key", "api_base_url": "\(base)/key-header", "api_allow_private": true,
                         "credential_format": "Token {api_key}", "verify": {"path": "/me", "user_id_field": "user.id"}},
              "keyqry": {"auth": "api_key", "api_base_url": "\(base)/key-query", "api_allow_private": true,
                         "credential_query_param": "api_key", "verify": {"path": "/me?fields=id"}},
              "basicp": {"auth": "basic", "api_base_url": "\(base)/basic", "api_allow_private": true, "verify": {"path": "/me"}},
              "bearerp": {"auth": "bearer", "api_base_url": "\(base)/bearer", "api_allow_private": true,
                          "verify": {"method": "GET", "path": "/me", "valid_statuses": [200, 204]}}
            }}
            """
        let broker = try BrokerHarness(
            providersJSON: providers,
            environment: [
                "BROKER_WEBHOOK_URL": receiver.url, "BROKER_WEBHOOK_SECRET": "whsec-credential-tests-0123456789",
                "BROKER_WEBHOOK_RETRY_BASE": "0.1", "BROKER_WEBHOOK_RETRY_CAP": "0.4", "BROKER_AUDIT_LOG": auditPath,
                "BROKER_ENCRYPTION_KEY": EncryptedRecordFixtures.keyText(),
            ].merging(extra) { $1 })
        return Setup(fake: fake, broker: broker, receiver: receiver, auditPath: auditPath)
    }

    static func json(_ body: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
    }

    @Test(arguments: Kind.allCases)
    func eachKindIsVerifiedStoredReadAndProxiedWithItsPlacement(kind: Kind) async throws {
        let s = try await Self.setUp()
        let created = try await s.post(
            "/accounts",
            #"{"provider":"\#(kind.rawValue)","credentials":\#(kind.credentials),"end_user_id":"user-1","tags":{"plan":"pro"}}"#)
        #expect(created.status == 201, "\(created.body)")
        let summary = Self.json(created.body)
        let id = try #require(summary["id"] as? String)
        if let uid = kind.expectedUID { #expect(id == "\(kind.rawValue):\(uid)") } else { #expect(id.hasPrefix("\(kind.rawValue):key-")) }
        #expect(summary["end_user_id"] as? String == "user-1")
        #expect(summary["access_token"] == nil && summary["credentials"] == nil)
        // The verification request reached the fake with the credential placed, and it accepted it.
        let verification = try #require(s.fake.state.calls.last)
        #expect(verification.accepted && verification.path.hasSuffix("/me"), "\(verification)")

        // GET /account gives it back to the API key, field by field.
        let read = try await s.get("/account?id=" + PercentEncoding.rfc3986(id))
        #expect(read.status == 200, "\(read.body)")
        let account = Self.json(read.body)
        let fields = try #require(account["credentials"] as? [String: String])
        #expect(fields == (Self.json(#"{"c":\#(kind.credentials)}"#)["c"] as? [String: String]))
        #expect(account["token_type"] as? String == (kind == .basic ? "basic" : kind == .bearer ? "bearer" : "api_key"))
        if kind == .basic {
            #expect(account["access_token"] is NSNull)
        } else {
            #expect(account["access_token"] as? String == fields.values.first)
        }

        // A proxied call carries it where the provider declared, and the caller's own Authorization does not travel.
        let proxied = try #require(
            await TestHTTP.send(
                port: s.broker.port, target: "/proxy/items?page=2",
                headers: [("Authorization", "Bearer " + BrokerHarness.apiKey), ("Broker-Account", id)]))
        #expect(proxied.status == 200, "\(proxied.body)")
        let call = try #require(s.fake.state.calls.last)
        #expect(call.accepted && call.path.hasSuffix("/items"))
        switch kind {
        case .keyHeader: #expect(call.authorization == "Token " + Self.apiKey && call.query == "page=2")
        case .keyQuery: #expect(call.authorization == nil && call.query == "page=2&api_key=" + Self.apiKey)
        case .basic: #expect(call.authorization == "Basic " + Base64.encode(Array("\(Self.username):\(Self.password)".utf8)))
        case .bearer: #expect(call.authorization == "Bearer " + Self.token)
        }
        #expect(await eventually { s.receiver.received.contains { $0.type == "account.connected" } })
        let log = s.broker.log
        #expect(log.contains(#""event":"credential_stored""#) && log.contains(#""event":"proxy_call""#))
        try await s.expectNoSecretLeaked([created, proxied])
        // Stopped, the broker has written its audit file out: the events are there, no value is.
        await s.broker.stop()
        let audit = s.audit
        #expect(audit.contains(#""event":"credential_stored""#) && audit.contains(#""event":"token_read""#), "\(audit)")
        for secret in Self.secrets { #expect(!audit.contains(secret)) }
    }

    @Test(arguments: Kind.allCases)
    func aCredentialTheProviderRefusesIs422AndNothingIsStored(kind: Kind) async throws {
        let s = try await Self.setUp()
        let refused = try await s.post("/accounts", #"{"provider":"\#(kind.rawValue)","credentials":\#(kind.wrongCredentials)}"#)
        #expect(refused.status == 422, "\(refused.body)")
        #expect(Self.json(refused.body)["error"] as? String == "credential_invalid")
        #expect(refused.body.contains("HTTP 401"))
        #expect(s.fake.state.calls.count == 1 && s.fake.state.calls.last?.accepted == false)
        let listing = try await s.get("/accounts")
        #expect(listing.body.contains(#""accounts":[]"#), "\(listing.body)")
        #expect(!s.broker.log.contains("not-the-"), "the log shows the refused value")
        #expect(!s.broker.dataDirectoryText().contains("not-the-"))
    }

    @Test(arguments: [
        (#"{"provider":"keyhdr","credentials":{"apikey":"x"}}"#, #"Unknown credential field \"apikey\""#),
        (#"{"provider":"keyhdr","credentials":{}}"#, #"The credential field \"api_key\" is required"#),
        (#"{"provider":"basicp","credentials":{"username":"ada"}}"#, #"The credential field \"password\" is required"#),
        (#"{"provider":"keyhdr","credentials":{"api_key":"a\nb"}}"#, #"\"api_key\" contains a control character"#),
        (#"{"provider":"keyhdr","credentials":{"api_key":7}}"#, #"\"api_key\" must be a string"#),
        (#"{"provider":"basicp","credentials":{"username":"a:b","password":"p"}}"#, #"\"username\" contains a colon"#),
        (#"{"provider":"keyhdr","credentials":{"api_key":"x"},"scope":"all"}"#, #"Unknown field \"scope\""#),
        (#"{"provider":"keyhdr"}"#, "The credentials field is required"),
        (#"{"provider":"nosuch","credentials":{"api_key":"x"}}"#, "unknown_provider"),
    ])
    func aWrongFieldIs400NamingItWithoutACall(body: String, expected: String) async throws {
        let s = try await Self.setUp()
        let reply = try await s.post("/accounts", body)
        #expect(reply.status == (expected == "unknown_provider" ? 404 : 400), "\(reply.body)")
        #expect(reply.body.contains(expected), "\(reply.body)")
        #expect(s.fake.state.calls.isEmpty)
    }

    @Test func aValueOverTheCapIs400() async throws {
        let s = try await Self.setUp()
        let long = String(repeating: "k", count: CredentialScheme.maximumValueBytes + 1)
        let reply = try await s.post("/accounts", #"{"provider":"keyhdr","credentials":{"api_key":"\#(long)"}}"#)
        #expect(reply.status == 400 && reply.body.contains("longer than 4096 bytes"), "\(reply.body)")
        #expect(s.fake.state.calls.isEmpty)
    }

    @Test func verifyOnDemandAsksTheProviderAgain() async throws {
        let s = try await Self.setUp()
        let created = try await s.post("/accounts", #"{"provider":"bearerp","credentials":\#(Kind.bearer.credentials),"uid":"team-9"}"#)
        #expect(created.status == 201, "\(created.body)")
        #expect(Self.json(created.body)["id"] as? String == "bearerp:team-9")
        let ok = try await s.post("/account/verify?id=bearerp:team-9", "")
        #expect(ok.status == 200 && ok.body.contains(#""valid":true"#), "\(ok.body)")
        // The provider revokes the token.
        s.fake.update { $0.token = "rotated" }
        // A refused proxied call is the provider's own 401, with no refresh attempted.
        let proxied = try #require(
            await TestHTTP.send(
                port: s.broker.port, target: "/proxy/x",
                headers: [("Authorization", "Bearer " + BrokerHarness.apiKey), ("Broker-Account", "bearerp:team-9")]))
        #expect(proxied.status == 401 && proxied.header("Broker-Refreshed") == nil)
        // Nothing to refresh, and nothing a gateway can be handed in one header.
        let refresh = try await s.post("/account/refresh?id=bearerp:team-9", "")
        #expect(refresh.status == 409 && refresh.body.contains("not_refreshable"), "\(refresh.body)")
        let forwarded = try #require(
            await TestHTTP.send(
                port: s.broker.port, target: "/auth?id=bearerp:team-9", headers: [("Authorization", "Bearer " + BrokerHarness.apiKey)]))
        #expect(forwarded.status == 409 && forwarded.body.contains("credential_not_forwardable"), "\(forwarded.body)")
        // The next verification says so, and records it: the account is `invalid` and reads answer 409 until one passes.
        let refused = try await s.post("/account/verify?id=bearerp:team-9", "")
        #expect(refused.status == 422 && refused.body.contains("credential_invalid"), "\(refused.body)")
        let read = try await s.get("/account?id=bearerp:team-9")
        #expect(read.status == 409 && read.body.contains("credential_invalid"), "\(read.body)")
        try await s.expectNoSecretLeaked([ok, refused, proxied, refresh, forwarded])
    }

    @Test func enteringTheSameKeyAgainUpdatesOneAccount() async throws {
        let s = try await Self.setUp()
        let first = try await s.post("/accounts", #"{"provider":"keyqry","credentials":\#(Kind.keyQuery.credentials)}"#)
        let second = try await s.post("/accounts", #"{"provider":"keyqry","credentials":\#(Kind.keyQuery.credentials)}"#)
        #expect(first.status == 201 && second.status == 200, "\(first.body) \(second.body)")
        #expect(Self.json(first.body)["id"] as? String == Self.json(second.body)["id"] as? String)
    }

    @Test func aKeyLimitedToSomeEndUsersCannotReplaceAnotherEndUsersCredential() async throws {
        let fake = try FakeCredentialProvider.scoped(
            apiKey: Self.apiKey, token: Self.token, username: Self.username, password: Self.password)
        let tenant = "tenant-key-0123456789abcdef0123456789"
        let broker = try BrokerHarness(
            providersJSON:
                #"{"providers": {"bearerp": {"auth": "bearer", "api_base_url": "\#(fake.baseURL)/bearer", "api_allow_private": true}}}"#,
            environment: ["BROKER_API_KEYS": "tenant:\(tenant)", "BROKER_API_KEY_SCOPES": "tenant=all end_user:t1-*"])
        func post(_ key: String, _ endUser: String) async throws -> TestHTTP.Reply {
            try #require(
                await TestHTTP.send(
                    port: broker.port, method: "POST", target: "/accounts",
                    headers: [("Authorization", "Bearer " + key), ("Content-Type", "application/json")],
                    body: #"{"provider":"bearerp","uid":"shared","end_user_id":"\#(endUser)","credentials":{"token":"\#(Self.token)"}}"#))
        }
        #expect(try await post(BrokerHarness.apiKey, "t2-owner").status == 201)
        let refused = try await post(tenant, "t1-thief")
        #expect(refused.status == 403, "\(refused.body)")
        let account = try #require(
            await TestHTTP.send(
                port: broker.port, target: "/account?id=bearerp:shared", headers: [("Authorization", "Bearer " + BrokerHarness.apiKey)]))
        #expect(Self.json(account.body)["end_user_id"] as? String == "t2-owner")
    }

    @Test func verificationKeepsToTheProxysAddressRules() async throws {
        // A base on a loopback address the providers file does not allow: refused before any socket, nothing stored.
        let broker = try BrokerHarness(
            providersJSON:
                #"{"providers": {"local": {"auth": "api_key", "api_base_url": "https://127.0.0.1:9/v1", "verify": {"path": "/me"}}}}"#)
        let reply = try #require(
            await TestHTTP.send(
                port: broker.port, method: "POST", target: "/accounts", headers: Self.api,
                body: #"{"provider":"local","credentials":{"api_key":"\#(Self.apiKey)"}}"#))
        #expect(reply.status == 502 && reply.body.contains("private or special-purpose address"), "\(reply.body)")
        let listing = try #require(await TestHTTP.send(port: broker.port, target: "/accounts", headers: Self.api))
        #expect(listing.body.contains(#""accounts":[]"#))
        #expect(!broker.log.contains(Self.apiKey))
    }

    @Test func aKeyWithoutAccountsWriteIsRefused() async throws {
        let fake = try FakeCredentialProvider.scoped(
            apiKey: Self.apiKey, token: Self.token, username: Self.username, password: Self.password)
        let broker = try BrokerHarness(
            providersJSON:
                #"{"providers": {"keyhdr": {"auth": "api_key", "api_base_url": "\#(fake.baseURL)/key-header", "api_allow_private": true}}}"#,
            environment: [
                "BROKER_API_KEYS": "reader:reader-key-0123456789abcdef0123456789",
                "BROKER_API_KEY_SCOPES": "reader=accounts:read tokens:read",
            ])
        let reply = try #require(
            await TestHTTP.send(
                port: broker.port, method: "POST", target: "/accounts",
                headers: [("Authorization", "Bearer reader-key-0123456789abcdef0123456789"), ("Content-Type", "application/json")],
                body: #"{"provider":"keyhdr","credentials":{"api_key":"x"}}"#))
        #expect(reply.status == 403, "\(reply.body)")
        #expect(fake.state.calls.isEmpty)
    }
}
