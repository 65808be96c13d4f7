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
        // A device sign-in is listed for the pollers of every replica; the key's TTL still bounds the flow.
        if flow.device != nil {
            do {
                _ = try await client.command("SADD", deviceSetKey, flow.state)
            } catch {
                throw error.storeError
            }
        }
    }

    /// Stores `flow` and, when `outcomes` is this store, `outcome` beside it in one script: one round trip, and the
    /// outcome is written only when the flow is.
    ///
    /// The script runs `SET … PX … NX` of the flow, then the outcome's `SET … PX` only when that answered OK, so a
    /// state already pending is refused as ``put(_:)`` refuses it and its outcome is left alone. A flow already
    /// expired by the store's clock is not stored and its outcome is recorded alone, as ``put(_:)`` then
    /// ``record(_:)`` would. With another outcome store this is ``put(_:)`` then `outcomes.record(outcome)`.
    public func put(_ flow: PendingFlow, recording outcome: FlowOutcome, in outcomes: any FlowOutcomeStore) async throws(StoreError) {
        guard (outcomes as? RedisFlowStore) === self, flow.device == nil else {
            return try await putThenRecord(flow, outcome, in: outcomes)
        }
        guard Self.isWellFormed(state: flow.state), Self.isWellFormed(state: outcome.state) else {
            throw .unavailable("put flow: the state is not 16 to 128 base64url characters")
        }
        let clock = now()
        let flowTTL = (flow.expiresAt.timeIntervalSince(clock) * 1000).rounded(.up)
        let outcomeTTL = (outcome.keepUntil.timeIntervalSince(clock) * 1000).rounded(.up)
        guard flowTTL >= 1, outcomeTTL >= 1 else { return try await putThenRecord(flow, outcome, in: self) }
        let command = RedisCommand(bytes: [
            Array("EVAL".utf8), Array(Self.putAndRecordScript.utf8), Array("2".utf8),
            Array(key(flow.state).utf8), Array(outcomeKey(outcome.state).utf8),
            try PendingFlowCodec.encode(flow, sealer: sealer), Array(String(Int(min(flowTTL, 1e15))).utf8),
            try FlowOutcomeCodec.encode(outcome), Array(String(Int(min(outcomeTTL, 1e15))).utf8),
        ])
        let reply: RESPValue
        do {
            reply = try await client.command(command)
        } catch {
            throw error.storeError
        }
        if let message = reply.errorMessage { throw RedisError.server(message).storeError }
        // The script answers 0 when the flow's key existed: two flows must never share a state.
        guard reply == .integer(1) else {
            throw .unavailable("put flow: a pending flow with this state already exists")
        }
    }

    /// KEYS[1] the flow, KEYS[2] its outcome; ARGV the flow's bytes and TTL, then the outcome's. Answers 1 when both
    /// were written, 0 when the flow's key existed (nothing written).
    static let putAndRecordScript = """
        if redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then
          redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4])
          return 1
        end
        return 0
        """

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
        if flow.device != nil { _ = try? await client.command("SREM", deviceSetKey, state) }
        return flow.isExpired(at: now) ? nil : flow
    }

    /// The flow for `state` with `GET`, not taken; nil when absent, expired at `now`, or `state` is malformed.
    public func pending(state: String, now: Date) async throws(StoreError) -> PendingFlow? {
        guard Self.isWellFormed(state: state) else { return nil }
        let key = key(state)
        let reply: RESPValue
        do {
            reply = try await client.command("GET", key)
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

    /// Overwrites the flow's key with `SET … PX … XX`, so a flow taken meanwhile (by any replica) is not brought back.
    public func replace(_ flow: PendingFlow) async throws(StoreError) -> Bool {
        guard Self.isWellFormed(state: flow.state) else { return false }
        let ttl = (flow.expiresAt.timeIntervalSince(now()) * 1000).rounded(.up)
        guard ttl >= 1 else { return false }
        let command = RedisCommand(bytes: [
            Array("SET".utf8), Array(key(flow.state).utf8), try PendingFlowCodec.encode(flow, sealer: sealer), Array("PX".utf8),
            Array(String(Int(min(ttl, 1e15))).utf8), Array("XX".utf8),
        ])
        do {
            return try await client.command(command) == .simpleString("OK")
        } catch {
            throw error.storeError
        }
    }

    /// The device sign-ins listed in `<prefix>device-flows` whose keys still exist; members whose key Redis expired are removed.
    public func deviceFlows(now: Date) async throws(StoreError) -> [PendingFlow] {
        let members: RESPValue
        do {
            members = try await client.command("SMEMBERS", deviceSetKey)
        } catch {
            throw error.storeError
        }
        guard case .array(let items?) = members else { return [] }
        var found: [PendingFlow] = []
        for item in items {
            guard let bytes = item.bytes else { continue }
            let state = String(decoding: bytes, as: UTF8.self)
            if let flow = try await pending(state: state, now: now), flow.device != nil {
                found.append(flow)
            } else {
                _ = try? await client.command("SREM", deviceSetKey, state)
            }
        }
        return found
    }

    /// The set listing the states of pending device sign-ins.
    var deviceSetKey: String { keyPrefix + "device-flows" }

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
