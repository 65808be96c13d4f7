import BrokerCrypto
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerCore

/// ``AppTokenService`` against an in-process upstream: the request it sends, and waiting for another replica's fetch.
struct AppTokenServiceTests {
    static let tokenURL = "https://id.example/token"

    static func registry(authentication: ClientAuthentication = .clientSecretBasic) -> ProviderRegistry {
        var provider = ProviderConfiguration(
            name: "m2m", kind: .oauth2, clientID: "the id", clientSecret: Secret("CLIENT-SECRET-SENTINEL-svc"), tokenURL: tokenURL,
            scopes: ["default.read"], clientAuthentication: authentication)
        provider.grants = .clientCredentials
        return ProviderRegistry(providers: [provider])
    }

    static func answer(_ token: String, expiresIn: Int = 3600) -> UpstreamResponse {
        UpstreamResponse(
            status: 200, headers: [("Content-Type", "application/json")],
            body: Array("{\"access_token\":\"\(token)\",\"token_type\":\"Bearer\",\"expires_in\":\(expiresIn)}".utf8))
    }

    @Test func theGrantRequestCarriesTheScopeAndTheClientAuthentication() async throws {
        let upstream = FakeUpstream()
        await upstream.on(Self.tokenURL, respond: Self.answer("APP-1"))
        let clock = TestClock()
        let service = AppTokenService(
            registry: Self.registry(), upstream: upstream, store: InProcessAppTokenStore(now: clock.function),
            lock: InProcessRefreshLock(now: clock.function), backoffStore: InProcessRefreshBackoffStore(now: clock.function),
            now: clock.function)
        let token = try await service.token(provider: "m2m", scope: nil)
        #expect(token.accessToken.value == "APP-1")
        #expect(token.expiresAt == clock.now.addingTimeInterval(3600))
        let sent = try #require(await upstream.requests.first)
        #expect(sent.method == "POST")
        #expect(sent.form == ["grant_type": "client_credentials", "scope": "default.read"])
        // RFC 6749 §2.3.1: the id and secret are percent-encoded before they are joined for HTTP Basic.
        let basic = try #require(sent.headers.first { $0.0 == "Authorization" }?.1)
        #expect(basic == "Basic " + Base64.encode(Array("the%20id:CLIENT-SECRET-SENTINEL-svc".utf8)))
        #expect(!String(decoding: sent.body, as: UTF8.self).contains("CLIENT-SECRET-SENTINEL"))
    }

    @Test func whileAnotherReplicaHoldsTheLockItsTokenIsAwaitedNotFetched() async throws {
        let upstream = FakeUpstream()
        await upstream.on(Self.tokenURL, respond: Self.answer("MINE"))
        let clock = TestClock()
        let store = InProcessAppTokenStore(now: clock.function)
        let lock = InProcessRefreshLock(now: clock.function)
        var policy = RefreshCoordinator.Policy()
        policy.pollInterval = 0.01
        let service = AppTokenService(
            registry: Self.registry(), upstream: upstream, store: store, lock: lock,
            backoffStore: InProcessRefreshBackoffStore(now: clock.function), policy: policy, now: clock.function)
        let key = AppToken.key(provider: "m2m", scope: "default.read")
        let other = try #require(await lock.acquire(key: AppTokenService.lockKey(for: key), ttl: 30))
        let waiting = Task { try await service.token(provider: "m2m", scope: "default.read") }
        // The other replica's fetch lands in the shared store, then it lets go of the lock.
        let theirs = AppToken(
            provider: "m2m", requestedScope: "default.read", accessToken: Secret("THEIRS"), tokenType: "Bearer", scope: nil,
            issuedAt: clock.now, expiresAt: clock.now.addingTimeInterval(3600))
        await store.store(theirs, keepUntil: clock.now.addingTimeInterval(3600), at: clock.now)
        #expect(try await waiting.value.accessToken.value == "THEIRS")
        await lock.release(key: AppTokenService.lockKey(for: key), token: other)
        #expect(await upstream.requests.isEmpty)
    }

    @Test func whileAnotherReplicaFetchesAnUnexpiredCachedTokenIsAnsweredAtOnce() async throws {
        let upstream = FakeUpstream()
        await upstream.on(Self.tokenURL, respond: Self.answer("MINE"))
        let clock = TestClock()
        let store = InProcessAppTokenStore(now: clock.function)
        let lock = InProcessRefreshLock(now: clock.function)
        let service = AppTokenService(
            registry: Self.registry(), upstream: upstream, store: store, lock: lock,
            backoffStore: InProcessRefreshBackoffStore(now: clock.function), now: clock.function)
        let key = AppToken.key(provider: "m2m", scope: "default.read")
        let cached = AppToken(
            provider: "m2m", requestedScope: "default.read", accessToken: Secret("CACHED"), tokenType: "Bearer", scope: nil,
            issuedAt: clock.now, expiresAt: clock.now.addingTimeInterval(3600))
        await store.store(cached, keepUntil: clock.now.addingTimeInterval(3600), at: clock.now)
        clock.advance(3500)  // due (inside the margin), not expired
        _ = try #require(await lock.acquire(key: AppTokenService.lockKey(for: key), ttl: 30))
        #expect(try await service.token(provider: "m2m", scope: nil).accessToken.value == "CACHED")
        #expect(await upstream.requests.isEmpty)
    }

    @Test(arguments: [
        (#"{"token_type":"Bearer","expires_in":3600}"#, "has no access_token"),
        (#"{"access_token":"A","expires_in":-5}"#, "expires_in is negative"),
        (#"{"error":"invalid_scope","error_description":"nope"}"#, "error invalid_scope"),
        ("", "empty body"),
    ])
    func aHostileAnswerIsAClearUpstreamErrorAndNothingIsCached(body: String, reason: String) async throws {
        let upstream = FakeUpstream()
        await upstream.on(
            Self.tokenURL, respond: UpstreamResponse(status: 200, headers: [("Content-Type", "application/json")], body: Array(body.utf8)))
        let clock = TestClock()
        let store = InProcessAppTokenStore(now: clock.function)
        let service = AppTokenService(
            registry: Self.registry(), upstream: upstream, store: store, lock: InProcessRefreshLock(now: clock.function),
            backoffStore: InProcessRefreshBackoffStore(now: clock.function), now: clock.function)
        do {
            _ = try await service.token(provider: "m2m", scope: nil)
            Issue.record("a token was handed out")
        } catch {
            guard case .upstreamError(let step, let message) = error else { throw error }
            #expect(step == "client_credentials_grant")
            #expect(message.contains(reason), "\(message)")
        }
        #expect(await store.token(for: AppToken.key(provider: "m2m", scope: "default.read")) == nil)
    }

    @Test func aRefreshTokenInTheAnswerIsNotKept() async throws {
        let upstream = FakeUpstream()
        await upstream.on(
            Self.tokenURL,
            respond: UpstreamResponse(
                status: 200, headers: [("Content-Type", "application/json")],
                body: Array(#"{"access_token":"A","refresh_token":"R-SENTINEL","expires_in":60,"scope":"x"}"#.utf8)))
        let clock = TestClock()
        let store = InProcessAppTokenStore(now: clock.function)
        let service = AppTokenService(
            registry: Self.registry(), upstream: upstream, store: store, lock: InProcessRefreshLock(now: clock.function),
            backoffStore: InProcessRefreshBackoffStore(now: clock.function), now: clock.function)
        let token = try await service.token(provider: "m2m", scope: "x")
        #expect(token.scope == "x")
        #expect(!String(decoding: AppTokenCodec.encode(token, sealer: nil), as: UTF8.self).contains("R-SENTINEL"))
    }
}
