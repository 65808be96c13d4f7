import BrokerCore
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerRedis

/// The shared app token cache on a real redis-server: the key, the sealed value, and a TTL that ends with the token.
struct RedisAppTokenStoreTests {
    static let codec = EncryptedAccountCodec(
        keyring: try! EncryptionKeyring.parse("k1:" + Data((0..<32).map { UInt8($0) }).base64EncodedString(), source: "test"))

    @Test func aTokenIsStoredSealedUnderItsKeyUntilItExpires() async throws {
        try await RedisServer.with { server async throws in
            let client = server.client()
            let store = RedisAppTokenStore(client: client, sealer: Self.codec)
            let token = AppToken(
                provider: "graph", requestedScope: "a b", accessToken: Secret("APP-TOKEN-SENTINEL-redis"), tokenType: "Bearer",
                scope: nil, issuedAt: Date.fixture, expiresAt: Date.fixture.addingTimeInterval(600))
            #expect(try await store.token(for: "graph|a b") == nil)
            let stored = ContinuousClock.now
            try await store.store(token, keepUntil: Date.fixture.addingTimeInterval(600), at: Date.fixture)
            #expect(try await store.token(for: "graph|a b") == token)
            let ttl = try #require(try await client.command("PTTL", "tb:apptoken:graph|a b").integer)
            // The TTL is the 600 s the token has left, less what passed since the store began (a loaded machine may
            // take seconds between the two commands): never more, and not less than that by more than a second.
            let passed = (ContinuousClock.now - stored).components
            let passedMS = Int(passed.seconds) * 1000 + Int(passed.attoseconds / 1_000_000_000_000_000) + 1
            #expect(ttl <= 600_000 && ttl >= 600_000 - passedMS - 1_000, "PTTL \(ttl) after \(passedMS) ms")
            let raw = try #require(try await client.command("GET", "tb:apptoken:graph|a b").string)
            #expect(!raw.contains("SENTINEL") && raw.contains("sealed:v1:k1:"))
            // Another replica without the key cannot read it, and says so rather than handing out garbage.
            await #expect(throws: StoreError.self) { try await RedisAppTokenStore(client: client).token(for: "graph|a b") }
            // A token already past its time is not stored.
            var stale = token
            stale.requestedScope = "c"
            try await store.store(stale, keepUntil: Date.fixture, at: Date.fixture)
            #expect(try await store.token(for: "graph|c") == nil)
        }
    }
}
