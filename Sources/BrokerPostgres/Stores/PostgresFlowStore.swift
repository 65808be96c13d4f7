import BrokerCore
import BrokerCrypto
import Foundation

/// A ``FlowStore`` and ``FlowOutcomeStore`` in PostgreSQL: a row per pending flow, taken with `DELETE … RETURNING`.
///
/// `take` is one `DELETE … RETURNING`: PostgreSQL locks the row, so of any
/// number of concurrent takes across any number of replicas exactly one
/// deletes it and gets it back. An expired flow is taken (and so removed) and
/// not returned. Puts, takes and outcomes commit asynchronously
/// (``PostgresCommit/asynchronous``, which says why that loses nothing a user
/// must keep): of a sign-in's writes only the account's waits for the flush. ``purgeExpired(now:)`` deletes the flows, and the outcomes,
/// whose time has passed; the broker runs it in the background as for files.
public final class PostgresFlowStore: FlowStore, FlowOutcomeStore {
    /// The client the store talks through.
    public let client: PostgresClient
    private let now: @Sendable () -> Date
    /// Seals the PKCE verifier and request-token secret at rest when set.
    let sealer: EncryptedAccountCodec?

    /// Creates a store over `client`, whose database has ``PostgresSchema`` applied; `now` is the store's clock.
    public init(client: PostgresClient, sealer: EncryptedAccountCodec? = nil, now: @escaping @Sendable () -> Date = { Date() }) {
        self.client = client
        self.sealer = sealer
        self.now = now
    }

    /// Inserts the flow, or takes the place of an expired one with its state; a state pending already is refused.
    /// Parameters: state, expiry, record, the store's clock, whether it is a device sign-in.
    static let insertFlow = """
        INSERT INTO flows (state, expires_at, record, device) VALUES ($1, $2, $3::bytea, $5)
        ON CONFLICT (state) DO UPDATE SET expires_at = EXCLUDED.expires_at, record = EXCLUDED.record, device = EXCLUDED.device
        WHERE flows.expires_at <= $4
        """

    /// Stores `flow` until its `expiresAt`; refuses a malformed state or one already pending.
    ///
    /// A flow already expired by the store's clock is not stored: a take could only ever answer nil.
    public func put(_ flow: PendingFlow) async throws(StoreError) {
        guard Self.isWellFormed(state: flow.state) else {
            throw .unavailable("put flow: the state is not 16 to 128 base64url characters")
        }
        let clock = now()
        guard flow.expiresAt > clock else { return }
        let bytes = try PendingFlowCodec.encode(flow, sealer: sealer)
        let rows = try await client.storeQuery(
            Self.insertFlow,
            [.text(flow.state), .int(milliseconds(flow.expiresAt)), .bytea(bytes), .int(milliseconds(clock)), .bool(flow.device != nil)],
            commit: .asynchronous)
        guard rows.affectedRows == 1 else { throw .unavailable("put flow: a pending flow with this state already exists") }
    }

    /// Stores `flow` and, when `outcomes` is this store, `outcome` in the same statement: the outcome's insert reads
    /// the flow's `RETURNING`, so it is written only when the flow is, in one round trip and one commit.
    public func put(_ flow: PendingFlow, recording outcome: FlowOutcome, in outcomes: any FlowOutcomeStore) async throws(StoreError) {
        guard (outcomes as? PostgresFlowStore) === self else { return try await putThenRecord(flow, outcome, in: outcomes) }
        guard Self.isWellFormed(state: flow.state), Self.isWellFormed(state: outcome.state) else {
            throw .unavailable("put flow: the state is not 16 to 128 base64url characters")
        }
        let clock = now()
        guard flow.expiresAt > clock, outcome.keepUntil > clock else { return try await putThenRecord(flow, outcome, in: self) }
        let rows = try await client.storeQuery(
            """
            WITH flow AS (\(Self.insertFlow) RETURNING 1)
            INSERT INTO flow_outcomes (state, keep_until, record) SELECT $6, $7, $8::bytea FROM flow
            ON CONFLICT (state) DO UPDATE SET keep_until = EXCLUDED.keep_until, record = EXCLUDED.record
            """,
            [
                .text(flow.state), .int(milliseconds(flow.expiresAt)), .bytea(try PendingFlowCodec.encode(flow, sealer: sealer)),
                .int(milliseconds(clock)), .bool(flow.device != nil), .text(outcome.state), .int(milliseconds(outcome.keepUntil)),
                .bytea(try FlowOutcomeCodec.encode(outcome)),
            ], commit: .asynchronous)
        guard rows.affectedRows == 1 else { throw .unavailable("put flow: a pending flow with this state already exists") }
    }

    /// Removes and returns the flow for `state`; nil when absent, expired at `now` (removed too), or `state` is malformed.
    public func take(state: String, now: Date) async throws(StoreError) -> PendingFlow? {
        guard Self.isWellFormed(state: state) else { return nil }
        let rows = try await client.storeQuery(
            "DELETE FROM flows WHERE state = $1 RETURNING record", [.text(state)], commit: .asynchronous)
        guard let row = rows.rows.first else { return nil }
        let flow = try decode(row, state: state)
        return flow.isExpired(at: now) ? nil : flow
    }

    /// The flow for `state` without taking it; nil when absent, expired at `now`, or `state` is malformed.
    public func pending(state: String, now: Date) async throws(StoreError) -> PendingFlow? {
        guard Self.isWellFormed(state: state) else { return nil }
        let rows = try await client.storeQuery("SELECT record FROM flows WHERE state = $1", [.text(state)])
        guard let row = rows.rows.first else { return nil }
        let flow = try decode(row, state: state)
        return flow.isExpired(at: now) ? nil : flow
    }

    /// Rewrites the row of `flow`'s state while it is pending (not taken, not expired by the store's clock), so a
    /// flow taken meanwhile by any replica is not brought back.
    public func replace(_ flow: PendingFlow) async throws(StoreError) -> Bool {
        guard Self.isWellFormed(state: flow.state) else { return false }
        let rows = try await client.storeQuery(
            """
            UPDATE flows SET expires_at = $2, record = $3::bytea, device = $4 WHERE state = $1 AND expires_at > $5
            """,
            [
                .text(flow.state), .int(milliseconds(flow.expiresAt)), .bytea(try PendingFlowCodec.encode(flow, sealer: sealer)),
                .bool(flow.device != nil), .int(milliseconds(now())),
            ])
        return rows.affectedRows == 1
    }

    /// The pending device sign-ins not expired at `now`, by the partial index on `device`.
    public func deviceFlows(now: Date) async throws(StoreError) -> [PendingFlow] {
        let rows = try await client.storeQuery(
            "SELECT state, record FROM flows WHERE device AND expires_at > $1 ORDER BY state", [.int(milliseconds(now))])
        var found: [PendingFlow] = []
        for row in rows.rows {
            guard let state = row.string(0) else { continue }
            let flow = try decode(row, state: state, column: 1)
            if flow.device != nil && !flow.isExpired(at: now) { found.append(flow) }
        }
        return found
    }

    /// The flow in a row's `record` column, checked against the row's state.
    private func decode(_ row: PostgresRow, state: String, column: Int = 0) throws(StoreError) -> PendingFlow {
        let path = "postgres flows row \(state)"
        guard let bytes = row.bytea(column) else { throw .corrupt(path: path, reason: "the record is not bytea") }
        let flow = try PendingFlowCodec.decode(bytes, path: path, sealer: sealer)
        guard flow.state == state else { throw .corrupt(path: path, reason: "the row does not match the flow's state") }
        return flow
    }

    /// Deletes the flows expired at `now` and the outcomes past their `keepUntil`; returns how many flows went.
    public func purgeExpired(now: Date) async throws(StoreError) -> Int {
        let at = milliseconds(now)
        let results: [PostgresRows]
        do {
            results = try await client.pipeline([
                PostgresQuery("DELETE FROM flows WHERE expires_at <= $1", [.int(at)]),
                PostgresQuery("DELETE FROM flow_outcomes WHERE keep_until <= $1", [.int(at)]),
            ])
        } catch {
            throw error.storeError
        }
        return results[0].affectedRows
    }

    /// Stores `outcome` until its `keepUntil`, replacing any earlier one; refuses a malformed state.
    ///
    /// An outcome already past its `keepUntil` by the store's clock is not stored.
    public func record(_ outcome: FlowOutcome) async throws(StoreError) {
        guard Self.isWellFormed(state: outcome.state) else {
            throw .unavailable("record flow outcome: the state is not 16 to 128 base64url characters")
        }
        guard outcome.keepUntil > now() else { return }
        _ = try await client.storeQuery(
            """
            INSERT INTO flow_outcomes (state, keep_until, record) VALUES ($1, $2, $3::bytea)
            ON CONFLICT (state) DO UPDATE SET keep_until = EXCLUDED.keep_until, record = EXCLUDED.record
            """, [.text(outcome.state), .int(milliseconds(outcome.keepUntil)), .bytea(try FlowOutcomeCodec.encode(outcome))],
            commit: .asynchronous)
    }

    /// The outcome stored for `state`; nil when none, past its `keepUntil` at `now`, or `state` is malformed.
    public func outcome(state: String, now: Date) async throws(StoreError) -> FlowOutcome? {
        guard Self.isWellFormed(state: state) else { return nil }
        let rows = try await client.storeQuery("SELECT record FROM flow_outcomes WHERE state = $1", [.text(state)])
        guard let row = rows.rows.first else { return nil }
        let path = "postgres flow_outcomes row \(state)"
        guard let bytes = row.bytea(0) else { throw .corrupt(path: path, reason: "the record is not bytea") }
        let outcome = try FlowOutcomeCodec.decode(bytes, path: path)
        guard outcome.state == state else { throw .corrupt(path: path, reason: "the row does not match the outcome's state") }
        return outcome.isStale(at: now) ? nil : outcome
    }

    /// Whether `state` is 16 to 128 base64url characters, as the other stores require.
    static func isWellFormed(state: String) -> Bool {
        Base64URL.isAlphabet(state, count: 16...128)
    }
}
