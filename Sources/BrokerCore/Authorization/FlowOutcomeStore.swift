import Foundation

/// How flows ended, by state, shared by every replica that shares the flows.
///
/// Every failure is a ``StoreError``.
public protocol FlowOutcomeStore: Sendable {
    /// Stores `outcome` under its state, replacing any earlier one, until its ``FlowOutcome/keepUntil``;
    /// returns only after the write is as durable as the store's flows.
    func record(_ outcome: FlowOutcome) async throws(StoreError)
    /// The outcome stored for `state`; nil when there is none, its `keepUntil` passed at `now`, or `state` is malformed.
    func outcome(state: String, now: Date) async throws(StoreError) -> FlowOutcome?
}
