import BrokerCore
import Foundation
import Synchronization

/// A ``FlowStore`` and ``FlowOutcomeStore`` in this process's memory, for tests whose subject is not storage.
///
/// It keeps the rules callers rely on: a state is 16–128 base64url characters
/// compared as exact bytes, each flow is taken once, expired flows and outcomes
/// are not returned. Nothing is durable.
public final class InMemoryFlowStore: FlowStore, FlowOutcomeStore {
    private let flows = Mutex<[ExactKey: PendingFlow]>([:])
    private let outcomes = Mutex<[ExactKey: FlowOutcome]>([:])

    /// An empty store.
    public init() {}

    /// Whether `state` is 16–128 base64url characters, as every store requires.
    static func isWellFormed(_ state: String) -> Bool {
        let bytes = Array(state.utf8)
        return (16...128).contains(bytes.count)
            && bytes.allSatisfy { byte in
                (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2D
                    || byte == 0x5F
            }
    }

    /// Keeps `flow`; a malformed state is refused.
    public func put(_ flow: PendingFlow) async throws(StoreError) {
        guard Self.isWellFormed(flow.state) else { throw .unavailable("put flow: the state is not 16 to 128 base64url characters") }
        flows.withLock { $0[ExactKey(flow.state)] = flow }
    }

    /// Keeps `flow` and, when `outcomes` is this store, `outcome` with it under one lock; else ``put(_:)`` then `record`.
    public func put(_ flow: PendingFlow, recording outcome: FlowOutcome, in outcomes: any FlowOutcomeStore) async throws(StoreError) {
        guard (outcomes as? InMemoryFlowStore) === self else { return try await putThenRecord(flow, outcome, in: outcomes) }
        guard Self.isWellFormed(flow.state), Self.isWellFormed(outcome.state) else {
            throw .unavailable("put flow: the state is not 16 to 128 base64url characters")
        }
        flows.withLock { flows in
            self.outcomes.withLock { $0[ExactKey(outcome.state)] = outcome }
            flows[ExactKey(flow.state)] = flow
        }
    }

    /// Removes and returns the flow for `state`; nil when absent, expired or malformed.
    public func take(state: String, now: Date) async throws(StoreError) -> PendingFlow? {
        guard let flow = flows.withLock({ $0.removeValue(forKey: ExactKey(state)) }) else { return nil }
        return flow.isExpired(at: now) ? nil : flow
    }

    /// Forgets expired flows and outcomes; returns how many flows.
    public func purgeExpired(now: Date) async throws(StoreError) -> Int {
        outcomes.withLock { $0 = $0.filter { $0.value.keepUntil > now } }
        return flows.withLock { table in
            let expired = table.filter { $0.value.isExpired(at: now) }.map(\.key)
            for key in expired { table[key] = nil }
            return expired.count
        }
    }

    /// The flow for `state` without taking it, unless expired.
    public func pending(state: String, now: Date) async throws(StoreError) -> PendingFlow? {
        guard let flow = flows.withLock({ $0[ExactKey(state)] }), !flow.isExpired(at: now) else { return nil }
        return flow
    }

    /// Replaces the flow of `flow`'s state when it is still kept.
    public func replace(_ flow: PendingFlow) async throws(StoreError) -> Bool {
        flows.withLock { table in
            guard table[ExactKey(flow.state)] != nil else { return false }
            table[ExactKey(flow.state)] = flow
            return true
        }
    }

    /// The unexpired flows with a device sign-in.
    public func deviceFlows(now: Date) async throws(StoreError) -> [PendingFlow] {
        flows.withLock { $0.values.filter { $0.device != nil && !$0.isExpired(at: now) } }
    }

    /// Keeps `outcome`, replacing any other of its state.
    public func record(_ outcome: FlowOutcome) async throws(StoreError) {
        outcomes.withLock { $0[ExactKey(outcome.state)] = outcome }
    }

    /// The outcome of `state` unless its keeping time passed at `now`.
    public func outcome(state: String, now: Date) async throws(StoreError) -> FlowOutcome? {
        guard let outcome = outcomes.withLock({ $0[ExactKey(state)] }), outcome.keepUntil > now else { return nil }
        return outcome
    }
}
