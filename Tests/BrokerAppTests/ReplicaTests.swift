import BrokerFakeProviders
import BrokerRedis
import BrokerTestSupport
import Foundation
import Synchronization
import Testing

/// Two real broker processes sharing one real `redis-server`.
@Suite(.serialized, .scoped) struct ReplicaTests {
    static let clientSecret = "WEIBO-CLIENT-SECRET-SENTINEL-replicas"
    static let api = [("Authorization", "Bearer " + BrokerHarness.apiKey)]

    struct Cluster {
        let redis: RedisServer
        let weibo: FakeOAuth2Provider
        let a: BrokerProcess
        let b: BrokerProcess
        /// Stops both brokers with SIGTERM, as an orchestrator would; the test's scope stops the rest.
        func stop() async {
            a.signal(SIGTERM)
            b.signal(SIGTERM)
            _ = await a.waitForExit(timeout: 60)
            _ = await b.waitForExit(timeout: 60)
        }
    }

    static func start() async throws -> Cluster {
        let redis = try await RedisServer.scoped(persistent: true)
        let weibo = try FakeOAuth2Provider.scoped(.weibo(clientSecret: clientSecret))
        let root = try TemporaryDirectory.scoped(prefix: "broker-replicas")
        let providers = root + "/providers.json"
        try Data("{\"providers\": {\(weibo.providerEntry)}}".utf8).write(to: URL(fileURLWithPath: providers))
        let key = "k1:" + Data((0..<32).map { UInt8($0) }).base64EncodedString()
        func environment(_ name: String) -> [String: String] {
            [
                "BROKER_DATA_DIR": root + "/" + name, "BROKER_STORE": "redis://127.0.0.1:\(redis.port)/0",
                "BROKER_PROVIDERS_FILE": providers, "FAKE_WEIBO_SECRET": clientSecret, "BROKER_API_KEY": BrokerHarness.apiKey,
                "BROKER_SECRET": "shared-cookie-secret-shared-cookie-secret", "BROKER_ENCRYPTION_KEY": key,
                "BROKER_UPSTREAM_TIMEOUT": "120", "BROKER_CORS_ORIGINS": "https://app.example.com",
            ]
        }
        let a = try await BrokerProcess.start(environment: environment("a"))
        let b = try await BrokerProcess.start(environment: environment("b"))
        return Cluster(redis: redis, weibo: weibo, a: a, b: b)
    }

    @Test func aFlowStartedOnOneReplicaFinishesOnTheOther() async throws {
        let c = try await Self.start()
        let onA = Browser(brokerPort: c.a.port, providerPort: c.weibo.port)
        let start = try #require(await onA.authorize("provider=weibo"))
        let callback = try #require(await onA.visitProvider(start.header("Location")!))
        let onB = Browser(brokerPort: c.b.port, providerPort: c.weibo.port)
        for (name, value) in onA.jar.cookies { onB.jar.set(name, value) }
        let done = try #require(await onB.get(callback))
        #expect(done.status == 200)
        // The session cookie made on B is honoured by A (shared BROKER_SECRET), and A reads the account from Redis.
        for (name, value) in onB.jar.cookies { onA.jar.set(name, value) }
        let read = try #require(await onA.get("/account?id=weibo:3733034601"))
        #expect(read.status == 200)
        #expect(read.body.contains("WEIBO-TOKEN-SENTINEL"))
        // Sealed in Redis too: the token is not in the stored value.
        let stored = try await c.redis.client().command("GET", "tb:account:weibo:3733034601")
        #expect(!"\(stored)".contains("WEIBO-TOKEN-SENTINEL"))
    }

    @Test func aConnectSessionMadeOnOneReplicaRunsOnTheOtherOnceAcrossBoth() async throws {
        let c = try await Self.start()
        let made = try #require(
            await TestHTTP.send(
                port: c.a.port, method: "POST", target: "/connect/sessions",
                headers: Self.api + [("Content-Type", "application/json")],
                body: "{\"end_user_id\":\"u-1\",\"origin\":\"https://app.example.com\"}"))
        #expect(made.status == 201)
        let token = try #require((try? JSONSerialization.jsonObject(with: Data(made.body.utf8)) as? [String: Any])?["token"] as? String)
        // Twenty browsers open it at once on both replicas: exactly one gets the page.
        let ports = [c.a.port, c.b.port]
        let statuses = await withTaskGroup(of: Int?.self) { group in
            for i in 0..<20 {
                group.addTask {
                    await TestHTTP.send(port: ports[i % 2], target: "/connect?session=" + token, headers: [("Accept", "text/html")])?.status
                }
            }
            var all: [Int?] = []
            for await s in group { all.append(s) }
            return all
        }
        #expect(statuses.filter { $0 == 200 }.count == 1 && statuses.filter { $0 == 410 }.count == 19, "\(statuses)")
        // A second session: opened on B, its provider chosen and its sign-in finished on A.
        let second = try #require(
            await TestHTTP.send(
                port: c.b.port, method: "POST", target: "/connect/sessions",
                headers: Self.api + [("Content-Type", "application/json")],
                body: "{\"end_user_id\":\"u-2\",\"origin\":\"https://app.example.com\"}"))
        let secondToken = try #require(
            (try? JSONSerialization.jsonObject(with: Data(second.body.utf8)) as? [String: Any])?["token"] as? String)
        let onB = Browser(brokerPort: c.b.port, providerPort: c.weibo.port)
        #expect(await onB.get("/connect?session=" + secondToken, headers: [("Accept", "text/html")])?.status == 200)
        let onA = Browser(brokerPort: c.a.port, providerPort: c.weibo.port)
        for (name, value) in onB.jar.cookies { onA.jar.set(name, value) }
        let start = try #require(await onA.get("/connect/start?provider=weibo", headers: [("Accept", "text/html")]))
        #expect(start.status == 302)
        let callback = try #require(await onA.visitProvider(start.header("Location") ?? ""))
        let end = try #require(await onA.get(callback, headers: [("Accept", "text/html")]))
        #expect(end.status == 200 && end.body.contains("data-account=\"weibo:3733034601\""))
        let read = try #require(await TestHTTP.send(port: c.b.port, target: "/account?id=weibo:3733034601", headers: Self.api))
        #expect(read.status == 200 && read.body.contains("\"end_user_id\":\"u-2\""))
        await c.stop()
    }

    @Test func twentyParallelCallbacksWithOneStateExchangeOnce() async throws {
        let c = try await Self.start()
        let browser = Browser(brokerPort: c.a.port, providerPort: c.weibo.port)
        let start = try #require(await browser.authorize("provider=weibo"))
        let callback = try #require(await browser.visitProvider(start.header("Location")!))
        let cookie = browser.jar.header
        let ports = [c.a.port, c.b.port]
        let statuses = await withTaskGroup(of: Int?.self) { group in
            for i in 0..<20 {
                group.addTask { await TestHTTP.send(port: ports[i % 2], target: callback, headers: cookie)?.status }
            }
            var all: [Int?] = []
            for await s in group { all.append(s) }
            return all
        }
        #expect(statuses.filter { $0 == 200 }.count == 1)
        #expect(statuses.filter { $0 == 400 }.count == 19)
        #expect(c.weibo.tokenCalls == 1)
    }

    @Test func aFlowCompletedOnOneReplicaReadsCompletedOnTheOther() async throws {
        let c = try await Self.start()
        let started = try #require(
            await TestHTTP.send(
                port: c.a.port, method: "POST", target: "/authorize",
                headers: Self.api + [("Content-Type", "application/x-www-form-urlencoded")], body: "provider=weibo"))
        #expect(started.status == 200)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(started.body.utf8)) as? [String: Any])
        let state = try #require(json["state"] as? String)
        let authorizeURL = try #require(json["authorize_url"] as? String)
        #expect(await TestHTTP.send(port: c.b.port, target: "/flows/" + state, headers: Self.api)?.body.contains("\"pending\"") == true)
        let browser = Browser(brokerPort: c.a.port, providerPort: c.weibo.port)
        let callback = try #require(await browser.visitProvider(authorizeURL))
        #expect(await browser.get(callback)?.status == 200)
        let onB = try #require(await TestHTTP.send(port: c.b.port, target: "/flows/" + state, headers: Self.api))
        #expect(onB.status == 200)
        #expect(onB.body.contains("\"status\":\"completed\"") && onB.body.contains("\"account\":\"weibo:3733034601\""))
        // Redis forgets it by itself: the key's TTL runs to BROKER_FLOW_TTL (600 s) after the callback.
        let ttl = try #require(try await c.redis.client().command("PTTL", "tb:flow-outcome:" + state).integer)
        #expect((1...600_000).contains(ttl), "PTTL \(ttl)")
        // The access log names the route, not the state. The line reaches the captured output in its own time: wait
        // for it, then look for the state.
        #expect(await eventually { c.b.log.contains("/flows/{state}") })
        #expect(!c.b.log.contains(state))
    }

    @Test func redisGoingAwayTurnsReadinessOffAndTheBrokersRecover() async throws {
        let c = try await Self.start()
        let browser = Browser(brokerPort: c.a.port, providerPort: c.weibo.port)
        #expect(await browser.connect(provider: "weibo")?.status == 200)
        await c.redis.kill()
        for port in [c.a.port, c.b.port] {
            let ready = await TestHTTP.send(port: port, target: "/readyz")
            #expect(ready?.status == 503)
            #expect(ready?.body.contains("redis_unreachable") == true)
            #expect(await TestHTTP.send(port: port, target: "/healthz")?.status == 200)
            let account = await TestHTTP.send(port: port, target: "/account?id=weibo:3733034601", headers: Self.api)
            #expect(account?.status == 503)
            #expect(account?.body.contains("\"error\":\"storage_unavailable\"") == true)
        }
        // A flow cannot start while storage is down; the provider is never asked.
        let calls = c.weibo.tokenCalls
        #expect(await browser.authorize("provider=weibo")?.status == 503)
        try await c.redis.restart()
        // The brokers reconnect by themselves; the append-only file kept the account.
        // Each replica reconnects on its own backoff: wait for both.
        let recovered = await eventually(interval: 0.1) {
            let a = await TestHTTP.send(port: c.a.port, target: "/readyz")?.status
            let b = await TestHTTP.send(port: c.b.port, target: "/readyz")?.status
            return a == 200 && b == 200
        }
        #expect(recovered)
        let kept = await TestHTTP.send(port: c.a.port, target: "/account?id=weibo:3733034601", headers: Self.api)
        #expect(kept?.status == 200)
        #expect(c.weibo.tokenCalls == calls)
        #expect(await browser.connect(provider: "weibo")?.status == 200)
        #expect(c.weibo.tokenCalls == calls + 1)
    }
}
