import BrokerCore
import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

extension FakeMCPServer {
    /// A fake MCP server and authorization server on 127.0.0.1:0 for the current ``TestScope``, stopped when the test ends.
    static func scoped(options: Options = Options()) throws -> FakeMCPServer {
        let server = FakeMCPServer(options: options)
        try server.start()
        TestScope.required("a fake MCP server")?.onEnd { await server.stop() }
        return server
    }

    /// The providers file naming this server as provider `tools`.
    var providersJSON: String {
        #"{"providers": {"tools": {"kind": "mcp", "server": "\#(serverURL)", "api_allow_private": true}}}"#
    }
}

/// Remote MCP servers end to end: a providers-file entry of `"kind": "mcp"` and the server's URL alone, against the
/// fake MCP server and authorization server over real sockets.
@Suite(.scoped) struct MCPEndToEndTests {
    static let api = [("Authorization", "Bearer " + BrokerHarness.apiKey)]

    /// The `/providers` item of `tools` on the broker at `port`.
    static func listed(_ port: Int) async -> [String: Any]? {
        guard let reply = await TestHTTP.send(port: port, target: "/providers"),
            let object = try? JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any],
            let items = object["providers"] as? [[String: Any]]
        else { return nil }
        return items.first { $0["name"] as? String == "tools" }
    }

    /// Whether `/providers` on `port` lists `tools` as available.
    static func available(_ port: Int) async -> Bool { await listed(port)?["available"] as? Bool == true }

    /// Signs in through `broker` and returns the new account's id.
    static func signIn(_ port: Int, _ server: FakeMCPServer) async throws -> String {
        let browser = Browser(brokerPort: port, providerPort: server.listener.port)
        let done = try #require(await browser.connect(provider: "tools"))
        #expect(done.status == 200)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(done.body.utf8)) as? [String: Any])
        return try #require(object["id"] as? String)
    }

    @Test func theServerURLAloneSignsInWithResourceAndS256AndTheProxyStreamsEventByEvent() async throws {
        let server = try FakeMCPServer.scoped()
        let broker = try BrokerHarness(providersJSON: server.providersJSON)
        #expect(await eventually(timeout: 60) { await Self.available(broker.port) })
        #expect(try #require(await Self.listed(broker.port))["kind"] as? String == "mcp")
        #expect(server.ledger.registrations == 1)

        let browser = Browser(brokerPort: broker.port, providerPort: server.listener.port)
        let start = try #require(await browser.authorize("provider=tools"))
        #expect(start.status == 302)
        let location = try #require(start.header("Location"))
        #expect(location.hasPrefix(server.issuer + "/authorize?"))
        let query = URLComponents(string: location)?.queryItems ?? []
        // RFC 8707 §2: the server is the resource; MCP authorization: PKCE S256, the challenge's scope.
        #expect(query.first { $0.name == "resource" }?.value == server.serverURL)
        #expect(query.first { $0.name == "code_challenge_method" }?.value == "S256")
        #expect(query.first { $0.name == "code_challenge" }?.value?.utf8.count == 43)
        #expect(query.first { $0.name == "scope" }?.value == "tools:read")
        #expect(query.first { $0.name == "client_id" }?.value?.hasPrefix("mcp-client-") == true)
        let callback = try #require(await browser.visitProvider(location))
        let done = try #require(await browser.get(callback))
        #expect(done.status == 200)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(done.body.utf8)) as? [String: Any])
        let id = try #require(object["id"] as? String)
        #expect(id.hasPrefix("tools:"))
        let exchange = try #require(server.ledger.tokenForms.last)
        #expect(exchange["grant_type"] == "authorization_code")
        #expect(exchange["resource"] == server.serverURL)

        // A JSON-RPC POST to the server through the proxy; the answer is SSE, sent on as each event arrives.
        let client = try RawClient(port: broker.port)
        let rpc = #"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search"}}"#
        client.send(
            "POST /proxy/ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(BrokerHarness.apiKey)\r\nBroker-Account: \(id)\r\n"
                + "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                + "Content-Length: \(rpc.utf8.count)\r\n\r\n" + rpc)
        server.events.push(#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#)
        #expect(
            await offPool {
                client.blockingRead(
                    until: Array(#"data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#.utf8))
            })
        // The second event is not sent until the test saw the first.
        #expect(!String(decoding: client.unread, as: UTF8.self).contains("result"))
        server.events.push(#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#)
        server.events.push(nil)
        #expect(await offPool { client.blockingRead(until: Array("\"result\":{\"content\":[]}}\n\n\r\n0\r\n\r\n".utf8)) })
        #expect(String(decoding: client.unread, as: UTF8.self).contains("text/event-stream"))
        #expect(server.ledger.serverCalls == 1)

        // The account refreshes as any OAuth 2.0 account, with the resource.
        let refreshed = try #require(
            await TestHTTP.send(port: broker.port, method: "POST", target: "/account/refresh?id=" + id, headers: Self.api))
        #expect(refreshed.status == 200)
        let refresh = try #require(server.ledger.tokenForms.last)
        #expect(refresh["grant_type"] == "refresh_token")
        #expect(refresh["resource"] == server.serverURL)
        #expect(server.ledger.registrations == 1)
        #expect(!broker.log.contains("mcp-at-"))
        #expect(!broker.log.contains("mcp-rt-"))
    }

    @Test func withoutAChallengeTheWellKnownMetadataIsFound() async throws {
        var options = FakeMCPServer.Options()
        options.challenge = false
        let server = try FakeMCPServer.scoped(options: options)
        let broker = try BrokerHarness(providersJSON: server.providersJSON)
        #expect(await eventually(timeout: 60) { await Self.available(broker.port) })
        let start = try #require(await Browser(brokerPort: broker.port, providerPort: server.listener.port).authorize("provider=tools"))
        let query = URLComponents(string: try #require(start.header("Location")))?.queryItems ?? []
        // No challenge scope: the protected resource metadata's scopes_supported.
        #expect(query.first { $0.name == "scope" }?.value == "tools:read tools:write")
    }

    @Test func aResourceMismatchLeavesTheBrokerReadyAndTheProviderUnavailableUntilTheServerIsFixed() async throws {
        var options = FakeMCPServer.Options()
        options.wrongResource = true
        let server = try FakeMCPServer.scoped(options: options)
        let broker = try BrokerHarness(providersJSON: server.providersJSON)
        #expect(
            await eventually(timeout: 60) {
                (await Self.listed(broker.port)?["reason"] as? String)?.hasPrefix("discovery failed: ") == true
            })
        let listed = try #require(await Self.listed(broker.port))
        #expect(listed["available"] as? Bool == false)
        #expect((listed["reason"] as? String)?.contains("RFC 9728 §3.3") == true)
        #expect(try #require(await TestHTTP.send(port: broker.port, target: "/readyz")).status == 200)
        let refused = try #require(await Browser(brokerPort: broker.port, providerPort: server.listener.port).authorize("provider=tools"))
        #expect(refused.status == 503)
        #expect(server.ledger.registrations == 0)
        server.set { $0.wrongResource = false }
        #expect(await eventually(timeout: 60) { await Self.available(broker.port) })
        #expect(server.ledger.registrations == 1)
        #expect(broker.log.contains("\"msg\":\"mcp discovery failed\""))
        #expect(broker.log.contains("\"msg\":\"mcp discovery loaded\""))
    }

    @Test(arguments: [
        ("no PKCE S256", "does not list PKCE S256"), ("issuer mismatch", "not the configured issuer"),
        ("no registration", "neither client ID metadata documents"),
    ])
    func anAuthorizationServerTheBrokerCannotUseLeavesTheProviderUnavailableWithTheReason(fault: String, reason: String) async throws {
        var options = FakeMCPServer.Options()
        switch fault {
        case "no PKCE S256": options.withoutS256 = true
        case "issuer mismatch": options.issuerMismatch = true
        default: options.registration = false
        }
        let server = try FakeMCPServer.scoped(options: options)
        let broker = try BrokerHarness(providersJSON: server.providersJSON)
        #expect(await eventually(timeout: 60) { (await Self.listed(broker.port)?["reason"] as? String)?.contains(reason) == true })
        #expect(try #require(await Self.listed(broker.port))["available"] as? Bool == false)
        #expect(try #require(await TestHTTP.send(port: broker.port, target: "/readyz")).status == 200)
        #expect(server.ledger.registrations == 0)
    }

    @Test func threeReplicasOnOneRedisRegisterOneClientAndARestartRegistersNone() async throws {
        var options = FakeMCPServer.Options()
        options.holdRegistrations = true
        let server = try FakeMCPServer.scoped(options: options)
        let redis = try await RedisServer.scoped()
        let key = "k1:" + Data((0..<32).map { UInt8($0) }).base64EncodedString()
        let root = try TemporaryDirectory.scoped(prefix: "mcp-replicas")
        let providers = root + "/providers.json"
        try Data(server.providersJSON.utf8).write(to: URL(fileURLWithPath: providers))
        /// A broker on the shared Redis, as a replica is built (``Broker/make(configuration:logger:upstream:clients:now:)``).
        func replica(_ name: String) async throws -> Broker {
            let environment = [
                "BROKER_PORT": "0", "BROKER_DATA_DIR": root + "/" + name, "BROKER_PROVIDERS_FILE": providers,
                "BROKER_API_KEY": BrokerHarness.apiKey, "BROKER_STORE": "redis://127.0.0.1:\(redis.port)/0",
                "BROKER_SECRET": "shared-cookie-secret-shared-cookie-secret", "BROKER_ENCRYPTION_KEY": key,
                "BROKER_UPSTREAM_TIMEOUT": "120", "BROKER_LOG_FORMAT": "json",
            ]
            let logger = BrokerLogger(
                format: .json, writer: LogWriter(fd: open(root + "/broker-\(name).log", O_CREAT | O_WRONLY | O_APPEND, 0o600)))
            let broker = try await Broker.make(configuration: try BrokerConfiguration.from(environment: environment), logger: logger)
            TestScope.required("a broker")?.onEnd { await broker.shutdown() }
            try broker.start()
            return broker
        }
        var replicas: [Broker] = []
        for name in ["a", "b", "c"] { replicas.append(try await replica(name)) }
        // All three have read the authorization server's metadata while the first registration is held: the other two
        // find no registration and wait on the registration lock.
        #expect(await eventually(timeout: 60) { server.ledger.metadataFetches >= 3 && server.ledger.registrationRequests >= 1 })
        server.releaseRegistrations()
        for broker in replicas { #expect(await eventually(timeout: 60) { await Self.available(broker.port) }) }
        #expect(server.ledger.registrations == 1)
        #expect(server.ledger.registrationRequests == 1)
        _ = try await Self.signIn(replicas[1].port, server)
        #expect(Set(server.ledger.authorizeQueries.compactMap { $0["client_id"] }).count == 1)
        for broker in replicas { await broker.shutdown() }

        let restarted = try await replica("d")
        #expect(await eventually(timeout: 60) { await Self.available(restarted.port) })
        _ = try await Self.signIn(restarted.port, server)
        #expect(server.ledger.registrations == 1)
        #expect(Set(server.ledger.authorizeQueries.compactMap { $0["client_id"] }).count == 1)
    }

    @Test func aRestartOnTheFileStoreReusesTheRegistration() async throws {
        let server = try FakeMCPServer.scoped()
        let data = try TemporaryDirectory.scoped(prefix: "mcp-files") + "/data"
        let first = try BrokerHarness(providersJSON: server.providersJSON, dataDirectory: data)
        #expect(await eventually(timeout: 60) { await Self.available(first.port) })
        await first.stop()
        let second = try BrokerHarness(providersJSON: server.providersJSON, dataDirectory: data)
        #expect(await eventually(timeout: 60) { await Self.available(second.port) })
        _ = try await Self.signIn(second.port, server)
        #expect(server.ledger.registrations == 1)
    }

    @Test func theClientMetadataDocumentListsTheCallbackOnAnHTTPSBroker() async throws {
        let server = try FakeMCPServer.scoped()
        let broker = try BrokerHarness(
            providersJSON: server.providersJSON, environment: ["BROKER_PUBLIC_URL": "https://broker.example.com"], listen: false)
        let document = await broker.respond(.GET, "/.well-known/oauth-client/tools")
        #expect(document.status == .ok)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(document.body)) as? [String: Any])
        #expect(object["client_id"] as? String == "https://broker.example.com/.well-known/oauth-client/tools")
        #expect(object["redirect_uris"] as? [String] == ["https://broker.example.com/callback"])
        #expect(object["token_endpoint_auth_method"] as? String == "none")
        #expect(await broker.respond(.GET, "/.well-known/oauth-client/github").status == .notFound)

        // With client ID metadata documents supported, the document's URL is the client id and nothing is registered.
        server.set { $0.clientMetadataDocuments = true }
        let discovery = broker.broker.mcpDiscovery
        let state = await discovery.load("tools")
        guard case .loaded(let authorization) = state else {
            Issue.record("discovery did not load: \(state)")
            return
        }
        #expect(authorization.clientID == "https://broker.example.com/.well-known/oauth-client/tools")
        #expect(authorization.clientSource == .metadataDocument)
        #expect(server.ledger.registrations == 0)
    }
}
