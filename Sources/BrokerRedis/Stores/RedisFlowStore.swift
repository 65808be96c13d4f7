import BrokerCore
import BrokerCrypto
import Foundation

/// A ``FlowStore`` in Redis: one key per pending flow, expired by Redis and taken with `GETDEL`.
///
/// `put` writes `<prefix>flow:<state>` with `SET … PX <ttl> NX`, the TTL running
/// to the flow's `expiresAt`; Redis deletes it when that passes, so
/// ``purgeExpired(now:)`` has nothing to do. `take` is one `GETDEL` (Redis 6.2
/// or later): Redis runs commands one at a time, so of any number of concurrent
/// takes across any number of replicas exactly one gets the flow.
///
/// As the ``FlowOutcomeStore`` of every replica, it keeps each flow's outcome
/// under `<prefix>flow-outcome:<state>` with `SET … PX` running to the
/// outcome's `keepUntil`, so Redis forgets it then; any replica reads it with `GET`.
public final class RedisFlowStore: FlowStore, FlowOutcomeStore {
    /// The client the store talks through.
    public let client: RedisClient
    /// The prefix of every key this store uses, `tb:` unless told otherwise.
    public let keyPrefix: String
    private let now: @Sendable () -> Date

    /// Seals the PKCE verifier and request-token secret at rest when set.
    let sealer: EncryptedAccountCodec?

    /// Creates a store over `client`; `now` is the clock TTLs are counted from.
    public init(
        client: RedisClient, keyPrefix: String = "tb:", sealer: EncryptedAccountCodec? = nil,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.sealer = sealer
        self.client = client
        self.keyPrefix = keyPrefix
        self.now = now
    }

    /// Stores `flow` until its `expiresAt`; refuses a state that is not 16–128 base64url characters or is already pending.
    ///
    /// A flow already expired by the store's clock is not stored: a take could only ever answer nil.
    public func put(_ flow: PendingFlow) async throws(StoreError) {
        guard Self.isWellFormed(state: flow.state) else {
            throw .unavailable("put flow: the state is not 16 to 128 base64url characters")
        }
        let ttl = (flow.expiresAt.timeIntervalSince(now()) * 1000).rounded(.up)
        guard ttl >= 1 else { return }
        let milliseconds = String(Int(min(ttl, 1e15)))
        let bytes = try PendingFlowCodec.encode(flow, sealer: sealer)
        let command = RedisCommand(bytes: [
            Array("SET".utf8), Array(key(flow.state).utf8), bytes, Array("PX".utf8), Array(milliseconds.utf8), Array("NX".utf8),
        ])
        let reply: RESPValue
        do {
            reply = try await client.command(command)
        } catch {
            throw error.storeError
        }
        // SET … NX answers nil when the key exists: two flows must never share a state.
        guard reply == .simpleString("OK") else {
            throw .unavailable("put flow: a pending flow with this state already exists")
        }
    }

    /// Removes and returns the flow for `state` with `GETDEL`; nil when absent, expired at `now`, or `state` is malformed.
    public func take(state: String, now: Date) async throws(StoreError) -> PendingFlow? {
        guard Self.isWellFormed(state: state) else { return nil }
        let key = key(state)
        let reply: RESPValue
        do {
            reply = try await client.command("GETDEL", key)
        } catch {
            throw error.storeError
        }
        guard let bytes = reply.bytes else { return nil }
        let flow = try PendingFlowCodec.decode(bytes, path: "redis key \(key)", sealer: sealer)
        guard flow.state == state else {
            throw .corrupt(path: "redis key \(key)", reason: "the key does not match the flow's state")
        }
        return flow.isExpired(at: now) ? nil : flow
    }

    /// Returns 0: Redis removes each flow itself when its TTL runs out.
    public func purgeExpired(now: Date) async throws(StoreError) -> Int {
        0
    }

    /// Stores `outcome` until its `keepUntil`, replacing any earlier one; refuses a malformed state.
    ///
    /// An outcome already past its `keepUntil` by the store's clock is not stored.
    public func record(_ outcome: FlowOutcome) async throws(StoreError) {
        guard Self.isWellFormed(state: outcome.state) else {
            throw .unavailable("record flow outcome: the state is not 16 to 128 base64url characters")
        }
        let ttl = (outcome.keepUntil.timeIntervalSince(now()) * 1000).rounded(.up)
        guard ttl >= 1 else { return }
        let milliseconds = String(Int(min(ttl, 1e15)))
        let bytes = try FlowOutcomeCodec.encode(outcome)
        let command = RedisCommand(bytes: [
            Array("SET".utf8), Array(outcomeKey(outcome.state).utf8), bytes, Array("PX".utf8), Array(milliseconds.utf8),
        ])
        do {
            _ = try await client.command(command)
        } catch {
            throw error.storeError
        }
    }

    /// The outcome stored for `state` with `GET`; nil when none, past its `keepUntil` at `now`, or `state` is malformed.
    public func outcome(state: String, now: Date) async throws(StoreError) -> FlowOutcome? {
        guard Self.isWellFormed(state: state) else { return nil }
        let key = outcomeKey(state)
        let reply: RESPValue
        do {
            reply = try await client.command("GET", key)
        } catch {
            throw error.storeError
        }
        guard let bytes = reply.bytes else { return nil }
        let outcome = try FlowOutcomeCodec.decode(bytes, path: "redis key \(key)")
        guard outcome.state == state else {
            throw .corrupt(path: "redis key \(key)", reason: "the key does not match the outcome's state")
        }
        return outcome.isStale(at: now) ? nil : outcome
    }

    /// The key of the outcome of the flow for `state`.
    func outcomeKey(_ state: String) -> String { keyPrefix + "flow-outcome:" + state }

    /// The key of the flow for `state`.
    func key(_ state: String) -> String { keyPrefix + "flow:" + state }

    /// Whether `state` is 16 to 128 base64url characters, as the file store requires too.
    static func isWellFormed(state: String) -> Bool {
        Base64URL.isAlphabet(state, count: 16...128)
    }
}
