import BrokerCore
import Foundation

/// The app token cache every replica shares: one key per provider and scope set, expired by Redis with the token.
///
/// `store` writes `<prefix>apptoken:<provider>|<scope>` with `SET … PX`, the
/// TTL running to when the broker lets the token go (its expiry), so nothing
/// outlives its token. The value is ``AppTokenCodec``'s JSON with the access
/// token sealed by the accounts' encryption key when `sealer` is set.
public final class RedisAppTokenStore: AppTokenStore {
    /// The client the store talks through.
    public let client: RedisClient
    /// The prefix of every key, `tb:` unless told otherwise.
    public let keyPrefix: String
    /// Seals the access token at rest.
    let sealer: EncryptedAccountCodec?

    /// Creates a store over `client`.
    public init(client: RedisClient, keyPrefix: String = "tb:", sealer: EncryptedAccountCodec? = nil) {
        self.client = client
        self.keyPrefix = keyPrefix
        self.sealer = sealer
    }

    /// The token under `key` with `GET`; nil when absent or expired; a value that does not decode or open throws.
    public func token(for key: String) async throws(StoreError) -> AppToken? {
        let reply: RESPValue
        do {
            reply = try await client.command("GET", redisKey(key))
        } catch {
            throw error.storeError
        }
        guard let bytes = reply.bytes else { return nil }
        return try AppTokenCodec.decode(bytes, key: key, path: "redis key \(redisKey(key))", sealer: sealer)
    }

    /// Writes `token` with a TTL from `now` to `keepUntil` (at least 1 ms).
    public func store(_ token: AppToken, keepUntil: Date, at now: Date) async throws(StoreError) {
        let milliseconds = (keepUntil.timeIntervalSince(now) * 1000).rounded(.up)
        guard milliseconds.isFinite, milliseconds >= 1 else { return }
        let ttl = String(Int(min(milliseconds, 1e15)))
        let command = RedisCommand(bytes: [
            Array("SET".utf8), Array(redisKey(token.key).utf8), AppTokenCodec.encode(token, sealer: sealer),
            Array("PX".utf8), Array(ttl.utf8),
        ])
        do {
            _ = try await client.command(command)
        } catch {
            throw error.storeError
        }
    }

    /// The Redis key of `key`.
    func redisKey(_ key: String) -> String { keyPrefix + "apptoken:" + key }
}
