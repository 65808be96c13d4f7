import BrokerCore
import Foundation

/// The refresh backoff every replica shares: one key per backing-off account, which Redis expires on its own.
///
/// `record` writes `<prefix>backoff:<account id>` with `SET … PX`, the TTL
/// running to the backoff's end plus ``keep`` seconds, so failures keep
/// counting across the next try and an account that recovered or was deleted
/// leaves nothing behind. The value is ``RefreshBackoff/encoded``: counts,
/// a time and the last error's step and reason, never a token. `notBefore` is
/// an absolute time, so replicas whose clocks disagree see the backoff end
/// that much apart. A value that does not decode reads as no backoff.
public final class RedisRefreshBackoffStore: RefreshBackoffStore {
    /// The client the store talks through.
    public let client: RedisClient
    /// The prefix of every key, `tb:` unless told otherwise, as the other Redis stores use.
    public let keyPrefix: String
    /// Seconds a key outlives its backoff.
    public let keep: TimeInterval

    /// Creates a store over `client` whose keys live `keep` seconds past their backoff's end.
    public init(client: RedisClient, keyPrefix: String = "tb:", keep: TimeInterval = RefreshCoordinator.Policy.backoffKeep) {
        self.client = client
        self.keyPrefix = keyPrefix
        self.keep = max(0, keep)
    }

    /// The backoff of `accountID` with `GET`; nil when absent, expired or undecodable; a Redis failure throws.
    public func backoff(for accountID: String) async throws(StoreError) -> RefreshBackoff? {
        let reply: RESPValue
        do {
            reply = try await client.command("GET", key(accountID))
        } catch {
            throw error.storeError
        }
        return reply.bytes.flatMap(RefreshBackoff.init(encoded:))
    }

    /// Writes `backoff` with a TTL from `now` to its end plus ``keep`` (at least 1 ms).
    public func record(_ backoff: RefreshBackoff, for accountID: String, at now: Date) async throws(StoreError) {
        let milliseconds = ((backoff.notBefore.timeIntervalSince(now) + keep) * 1000).rounded(.up)
        guard milliseconds.isFinite else { return }
        let ttl = String(Int(min(max(milliseconds, 1), 1e15)))
        let command = RedisCommand(bytes: [
            Array("SET".utf8), Array(key(accountID).utf8), backoff.encoded, Array("PX".utf8), Array(ttl.utf8),
        ])
        do {
            _ = try await client.command(command)
        } catch {
            throw error.storeError
        }
    }

    /// Deletes `accountID`'s key.
    public func clear(accountID: String) async throws(StoreError) {
        do {
            _ = try await client.command("DEL", key(accountID))
        } catch {
            throw error.storeError
        }
    }

    /// Deletes `accountID`'s key and returns what it held, in one `GETDEL` (Redis 6.2); nil when absent or undecodable.
    public func take(accountID: String) async throws(StoreError) -> RefreshBackoff? {
        let reply: RESPValue
        do {
            reply = try await client.command("GETDEL", key(accountID))
        } catch {
            throw error.storeError
        }
        return reply.bytes.flatMap(RefreshBackoff.init(encoded:))
    }

    /// The Redis key of `accountID`'s backoff.
    func key(_ accountID: String) -> String { keyPrefix + "backoff:" + accountID }
}
