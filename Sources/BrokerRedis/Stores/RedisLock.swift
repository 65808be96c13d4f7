import BrokerCore
import BrokerCrypto

/// A lock across replicas: `SET key token NX PX ttl` to take it, a compare-and-delete script to give it back.
///
/// Only the holder of the token can release the lock, and a holder that dies
/// loses it when the TTL runs out. Keys live under `<prefix>lock:`. This is a
/// single-instance Redis lock: enough for single-flight token refresh, where
/// two holders at once (after a TTL ran out mid-work) cost a wasted refresh, not
/// corrupted data. A release that fails because Redis is away is tried again once
/// it answers (``PendingLockReleases``), and so is the release of an acquire whose
/// reply was lost, so the next refresh does not wait out the TTL.
public final class RedisLock: Sendable {
    /// Deletes the key only while it still holds the caller's token.
    static let releaseScript = "if redis.call('get',KEYS[1])==ARGV[1] then return redis.call('del',KEYS[1]) else return 0 end"

    /// The client the lock talks through.
    public let client: RedisClient
    /// The prefix of every lock key, `tb:` unless told otherwise.
    public let keyPrefix: String
    /// Releases that failed while Redis was away, retried until it answers.
    public let pendingReleases: PendingLockReleases
    private let makeToken: @Sendable () -> String

    /// Creates a lock over `client`; each acquisition gets a fresh random token (128 bits) from `makeToken`.
    public init(
        client: RedisClient, keyPrefix: String = "tb:", makeToken: @escaping @Sendable () -> String = { SecureRandom.token(byteCount: 16) }
    ) {
        self.client = client
        self.keyPrefix = keyPrefix
        self.makeToken = makeToken
        let prefixed = keyPrefix + "lock:"
        pendingReleases = PendingLockReleases { [client] key, token throws(StoreError) in
            try await Self.delete(client, key: prefixed + key, token: token)
        }
    }

    /// Takes the lock `key` for `ttl` seconds (rounded up to whole milliseconds); returns the owner's token, or nil when held by someone.
    ///
    /// `ttl` must be positive and finite. A Redis failure throws ``StoreError/unavailable(_:)``, as every store does.
    public func acquire(key: String, ttl: Double) async throws(StoreError) -> String? {
        precondition(ttl.isFinite && ttl > 0, "RedisLock.acquire: ttl must be a positive number of seconds")
        // This replica's own lock on `key` that it could not give back is freed first.
        await pendingReleases.flush(key: key)
        let milliseconds = String(Int(min((ttl * 1000).rounded(.up), 1e15)))
        let token = makeToken()
        let reply: RESPValue
        do {
            reply = try await client.command("SET", lockKey(key), token, "NX", "PX", milliseconds)
        } catch {
            // Unless Redis answered with an error, the SET may have run with a token no one was given (a reply lost
            // to a timeout or a dropped connection): its release is retried too.
            if case .server = error {} else { pendingReleases.rememberUncertainAcquire(key: key, token: token) }
            throw error.storeError
        }
        return reply == .simpleString("OK") ? token : nil
    }

    /// Releases the lock `key` if `token` still owns it; returns whether it did.
    ///
    /// When Redis does not answer, the release is remembered and tried again until it does, and the error is thrown.
    public func release(key: String, token: String) async throws(StoreError) -> Bool {
        do {
            return try await Self.delete(client, key: lockKey(key), token: token)
        } catch {
            pendingReleases.remember(key: key, token: token)
            throw error
        }
    }

    /// Deletes the Redis key `redisKey` while it holds `token`; returns whether it did.
    static func delete(_ client: RedisClient, key redisKey: String, token: String) async throws(StoreError) -> Bool {
        let reply: RESPValue
        do {
            reply = try await client.command("EVAL", Self.releaseScript, "1", redisKey, token)
        } catch {
            throw error.storeError
        }
        return reply.integer == 1
    }

    /// The Redis key of lock `key`.
    func lockKey(_ key: String) -> String { keyPrefix + "lock:" + key }
}
