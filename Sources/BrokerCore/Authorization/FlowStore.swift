import Foundation

/// Pending authorizations: each can be taken exactly once before it expires.
///
/// Every failure is a ``StoreError``.
public protocol FlowStore: Sendable {
    /// Stores `flow` under its state; returns only after the write is durable.
    func put(_ flow: PendingFlow) async throws(StoreError)
    /// Atomically removes and returns the flow for `state`; nil if absent, expired (removed too) or malformed.
    ///
    /// Single use: of any number of concurrent takes of one state, exactly one gets the flow.
    func take(state: String, now: Date) async throws(StoreError) -> PendingFlow?
    /// Removes every flow expired at `now` and returns how many were removed.
    func purgeExpired(now: Date) async throws(StoreError) -> Int
}
