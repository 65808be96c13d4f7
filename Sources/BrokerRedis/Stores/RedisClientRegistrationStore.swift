import BrokerCore
import Foundation

/// The client registrations every replica shares: one key per registration, `<prefix>client:<key>`, never expiring.
///
/// ``add(_:)`` is `SET … NX` followed by a `GET` when the key was taken: the first replica's registration stays and
/// every other gets it back. The value is ``ClientRegistrationCodec``'s JSON, the secret sealed when `sealer` is set.
public final class RedisClientRegistrationStore: ClientRegistrationStore {
    /// The client the store talks through.
    public let client: RedisClient
    /// The prefix of every key, `tb:` unless told otherwise.
    public let keyPrefix: String
    /// Seals client secrets at rest.
    let sealer: EncryptedAccountCodec?

    /// Creates a store over `client`.
    public init(client: RedisClient, keyPrefix: String = "tb:", sealer: EncryptedAccountCodec? = nil) {
        self.client = client
        self.keyPrefix = keyPrefix
        self.sealer = sealer
    }

    /// The registration under `key` with `GET`; nil when absent.
    public func registration(for key: String) async throws(StoreError) -> ClientRegistration? {
        let reply: RESPValue
        do {
            reply = try await client.command("GET", redisKey(key))
        } catch {
            throw error.storeError
        }
        guard let bytes = reply.bytes else { return nil }
        return try ClientRegistrationCodec.decode(bytes, key: key, path: "redis key \(redisKey(key))", sealer: sealer)
    }

    /// `SET NX` of `registration`; when another was there first, that one.
    public func add(_ registration: ClientRegistration) async throws(StoreError) -> ClientRegistration {
        let key = registration.key
        let command = RedisCommand(bytes: [
            Array("SET".utf8), Array(redisKey(key).utf8), ClientRegistrationCodec.encode(registration, sealer: sealer), Array("NX".utf8),
        ])
        let reply: RESPValue
        do {
            reply = try await client.command(command)
        } catch {
            throw error.storeError
        }
        // `OK` when set; a null reply when the key was there.
        if reply.bytes != nil { return registration }
        guard let kept = try await self.registration(for: key) else {
            throw .unavailable("redis: SET NX of \(redisKey(key)) found a value that is gone")
        }
        return kept
    }

    /// The Redis key of `key`.
    func redisKey(_ key: String) -> String { keyPrefix + "client:" + key }
}
