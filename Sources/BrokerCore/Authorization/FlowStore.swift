import Foundation

/// Pending authorizations: each can be taken exactly once before it expires.
///
/// Every failure is a ``StoreError``.
public protocol FlowStore: Sendable {
    /// Stores `flow` under its state; returns only after the write is durable.
    func put(_ flow: PendingFlow) async throws(StoreError)
    /// Stores `flow` and records `outcome` in `outcomes`; returns only after both writes are durable.
    ///
    /// When `outcomes` is this store, both go in one write with one durable
    /// wait (a sign-in's start pays one fsync, not two); otherwise this is
    /// ``put(_:)`` followed by `outcomes.record(outcome)`. A failure may leave
    /// the flow stored without its outcome, never the outcome without the flow.
    func put(_ flow: PendingFlow, recording outcome: FlowOutcome, in outcomes: any FlowOutcomeStore) async throws(StoreError)
    /// Atomically removes and returns the flow for `state`; nil if absent, expired (removed too) or malformed.
    ///
    /// Single use: of any number of concurrent takes of one state, exactly one gets the flow.
    func take(state: String, now: Date) async throws(StoreError) -> PendingFlow?
    /// Removes every flow expired at `now` and returns how many were removed.
    func purgeExpired(now: Date) async throws(StoreError) -> Int
    /// The pending flow for `state` without taking it; nil if absent, expired at `now` or malformed.
    func pending(state: String, now: Date) async throws(StoreError) -> PendingFlow?
    /// Replaces the pending flow with `flow`'s state by `flow` (a device sign-in's next poll); returns false, writing
    /// nothing, when that flow is no longer pending.
    func replace(_ flow: PendingFlow) async throws(StoreError) -> Bool
    /// Every pending device sign-in (a flow with a ``PendingFlow/device``) not expired at `now`, for the poller.
    func deviceFlows(now: Date) async throws(StoreError) -> [PendingFlow]
}

extension FlowStore {
    /// ``put(_:)``, then `outcomes.record(outcome)`: two writes, for a store that keeps no outcomes itself or is handed
    /// another store's.
    public func putThenRecord(_ flow: PendingFlow, _ outcome: FlowOutcome, in outcomes: any FlowOutcomeStore) async throws(StoreError) {
        try await put(flow)
        try await outcomes.record(outcome)
    }
}
