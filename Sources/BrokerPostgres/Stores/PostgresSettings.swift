/// What the replicas of one PostgreSQL store agree on, kept in its `broker_settings` table (schema version 4): the
/// encryption keyring and the cookie secret generated for replicas started without `BROKER_ENCRYPTION_KEY` or
/// `BROKER_SECRET`.
///
/// Each value is proposed with `INSERT … ON CONFLICT (name) DO NOTHING` and
/// then read back. The primary key settles a race: of replicas starting
/// together on a fresh database, one insert commits, the others' wait for it
/// (PostgreSQL waits on the conflicting row's transaction before deciding) and
/// do nothing, and every replica's `SELECT`, with a snapshot taken after
/// that, reads the one that committed. A stored value is never replaced by a
/// start-up, so a value put there by an operator (or a later rotation) is kept.
public struct PostgresSettings: Sendable {
    /// The client the settings are read and written through.
    public let client: PostgresClient

    /// The row of the generated keyring, text in `BROKER_ENCRYPTION_KEY` syntax (`id:base64,…`, current first).
    public static let generatedKeyName = "generated_encryption_key"
    /// The row of the generated cookie secret, its bytes.
    public static let generatedSecretName = "generated_broker_secret"

    /// Creates the settings over `client`, whose database has ``PostgresSchema`` applied.
    public init(client: PostgresClient) {
        self.client = client
    }

    /// Where an agreed value came from.
    public enum Origin: Sendable, Equatable {
        /// This call's proposal was stored: no replica had stored one.
        case created
        /// Another replica (or an earlier start) had stored it; the proposal was dropped.
        case stored
    }

    /// The value of `name`: the one stored, else `proposed`, stored now by this call.
    ///
    /// With `whileAccountsExist` false the proposal is only stored while the
    /// `accounts` table is empty (checked in the same statement), and nil is
    /// returned when nothing is stored and accounts exist: a keyring generated
    /// now could not open records sealed with a key the other replicas were given.
    public func agree(
        _ name: String, proposing proposed: [UInt8], whileAccountsExist: Bool = true
    ) async throws(PostgresError) -> (value: [UInt8], origin: Origin)? {
        let inserted = try await client.query(
            """
            INSERT INTO broker_settings (name, value)
            SELECT $1, $2::bytea WHERE $3::boolean OR NOT EXISTS (SELECT 1 FROM accounts)
            ON CONFLICT (name) DO NOTHING
            """, [.text(name), .bytea(proposed), .bool(whileAccountsExist)])
        guard let value = try await value(name) else { return nil }
        return (value, inserted.affectedRows == 1 ? .created : .stored)
    }

    /// The stored value of `name`, nil when none is.
    public func value(_ name: String) async throws(PostgresError) -> [UInt8]? {
        let rows = try await client.query("SELECT value FROM broker_settings WHERE name = $1", [.text(name)])
        guard let row = rows.rows.first else { return nil }
        guard let bytes = row.bytea(0) else { throw .protocolError("broker_settings.value of \(name) is not bytea") }
        return bytes
    }
}
