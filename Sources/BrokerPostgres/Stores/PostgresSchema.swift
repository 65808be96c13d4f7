import BrokerCore

/// The broker's tables in PostgreSQL and the versioned migrations that make them.
///
/// Each migration is a list of statements with a version; `schema_migrations`
/// holds one row per version applied. ``migrate(_:)`` runs in one transaction
/// that first takes `pg_advisory_xact_lock` (released at COMMIT or ROLLBACK), so
/// replicas starting together wait for each other and the first one applies
/// what is missing while the others find nothing left to do. A database whose
/// newest version is above ``latestVersion`` was migrated by a newer broker:
/// this one stops with ``PostgresSchemaError/newerThanKnown(found:known:)``
/// rather than write rows that newer code may read differently.
///
/// Every text column that holds an id, a provider or a state is `COLLATE "C"`:
/// it compares bytes, which is the UTF-8 byte order the seam's listings promise
/// (and keeps canonically equivalent ids distinct). Times are milliseconds
/// since 1970 in `bigint`, the broker's clock unless a column says otherwise.
public enum PostgresSchema {
    /// The key of the advisory lock migrations take: "tbschema" in ASCII, so other applications' keys are unlikely to meet it.
    static let advisoryLockKey = 0x7462_7363_6865_6D61

    /// One step of the schema.
    struct Migration: Sendable {
        /// Its number; applied in increasing order, each once.
        var version: Int
        /// What it does, for the start-up log.
        var summary: String
        /// Its statements, run in order in the migration's transaction.
        var statements: [String]
    }

    /// Every migration this binary knows, oldest first.
    static let migrations: [Migration] = [
        Migration(
            version: 1, summary: "accounts, flows, flow outcomes, webhook outbox, refresh locks and backoff, app tokens",
            statements: [
                // The sealed record is the codec's bytes, as the file store and Redis keep them; the other columns
                // are copies of its fields for the /accounts filters and the cursor, rewritten with the record.
                """
                CREATE TABLE accounts (
                    id text COLLATE "C" PRIMARY KEY,
                    provider text COLLATE "C" NOT NULL,
                    uid text COLLATE "C" NOT NULL,
                    end_user text COLLATE "C",
                    tags jsonb NOT NULL DEFAULT '{}',
                    status text NOT NULL,
                    expires_at bigint,
                    updated_at bigint NOT NULL,
                    record bytea NOT NULL
                )
                """,
                "CREATE INDEX accounts_provider_id ON accounts (provider, id)",
                "CREATE INDEX accounts_end_user_id ON accounts (end_user, id) WHERE end_user IS NOT NULL",
                "CREATE INDEX accounts_tags ON accounts USING gin (tags jsonb_path_ops)",
                "CREATE INDEX accounts_status ON accounts (status)",
                """
                CREATE TABLE flows (
                    state text COLLATE "C" PRIMARY KEY,
                    expires_at bigint NOT NULL,
                    record bytea NOT NULL,
                    device boolean NOT NULL DEFAULT false
                )
                """,
                "CREATE INDEX flows_expires_at ON flows (expires_at)",
                // Device sign-ins, which the poller lists on every sweep (RFC 8628 §3.4).
                "CREATE INDEX flows_device ON flows (state) WHERE device",
                """
                CREATE TABLE flow_outcomes (
                    state text COLLATE "C" PRIMARY KEY,
                    keep_until bigint NOT NULL,
                    record bytea NOT NULL
                )
                """,
                "CREATE INDEX flow_outcomes_keep_until ON flow_outcomes (keep_until)",
                // One row per delivery; claimed with FOR UPDATE SKIP LOCKED by any replica (not used yet: the
                // PostgreSQL outbox is the next step of issue 35).
                """
                CREATE TABLE webhook_outbox (
                    id text COLLATE "C" PRIMARY KEY,
                    event_id text COLLATE "C" NOT NULL,
                    url text NOT NULL,
                    enqueued_at bigint NOT NULL,
                    due_at bigint NOT NULL,
                    lease_token text,
                    lease_until bigint,
                    dropped_at bigint,
                    record bytea NOT NULL
                )
                """,
                "CREATE INDEX webhook_outbox_due ON webhook_outbox (due_at, id) WHERE dropped_at IS NULL",
                "CREATE INDEX webhook_outbox_dropped ON webhook_outbox (dropped_at DESC, id) WHERE dropped_at IS NOT NULL",
                "CREATE INDEX webhook_outbox_event ON webhook_outbox (event_id)",
                // A lease row per refresh in progress; expires_at is on the server's clock, which every replica shares.
                """
                CREATE TABLE refresh_locks (
                    key text COLLATE "C" PRIMARY KEY,
                    token text NOT NULL,
                    expires_at bigint NOT NULL
                )
                """,
                """
                CREATE TABLE refresh_backoff (
                    account_id text COLLATE "C" PRIMARY KEY,
                    forget_after bigint NOT NULL,
                    record bytea NOT NULL
                )
                """,
                """
                CREATE TABLE app_tokens (
                    key text COLLATE "C" PRIMARY KEY,
                    keep_until bigint NOT NULL,
                    record bytea NOT NULL
                )
                """,
            ]),
        Migration(
            version: 2, summary: "accounts.counts_expired_at, so /metrics counts accounts by status without reading records",
            statements: [
                // AccountStatusCounts.expiryThatCounts: the expiry of an active account holding no refresh token,
                // NULL otherwise; written with the record from now on. Rows of version 1 are filled from their
                // records' readable JSON (a sealed refresh token is an object there, a missing one absent or null).
                "ALTER TABLE accounts ADD COLUMN counts_expired_at bigint",
                """
                UPDATE accounts SET counts_expired_at = expires_at
                WHERE status = 'active' AND convert_from(record, 'UTF8')::jsonb ->> 'refresh_token' IS NULL
                """,
            ]),
        Migration(
            version: 3, summary: "client registrations at remote MCP servers",
            statements: [
                """
                CREATE TABLE client_registrations (
                    key text COLLATE "C" PRIMARY KEY,
                    registered_at bigint NOT NULL,
                    record bytea NOT NULL
                )
                """
            ]),
        Migration(
            version: 4, summary: "broker_settings, where replicas started without a key or secret agree on generated ones",
            statements: [
                // One row per setting, written once (INSERT … ON CONFLICT DO NOTHING) and never overwritten by a
                // start-up: see PostgresSettings.
                """
                CREATE TABLE broker_settings (
                    name text COLLATE "C" PRIMARY KEY,
                    value bytea NOT NULL,
                    created_at timestamptz NOT NULL DEFAULT now()
                )
                """
            ]),
    ]

    /// The newest version this binary knows.
    public static var latestVersion: Int { migrations.last?.version ?? 0 }

    /// Applies the migrations the database lacks, once across every replica; returns the versions this call applied
    /// (empty when another replica, or an earlier start, applied them).
    @discardableResult
    public static func migrate(_ client: PostgresClient) async throws(PostgresSchemaError) -> [Int] {
        try await migrate(client, migrations: migrations)
    }

    /// ``migrate(_:)`` with a given list, for tests of a binary that knows fewer or more versions.
    static func migrate(_ client: PostgresClient, migrations: [Migration]) async throws(PostgresSchemaError) -> [Int] {
        let known = migrations.last?.version ?? 0
        do {
            return try await client.transaction { (connection) async throws(PostgresError) -> [Int] in
                // Held until COMMIT or ROLLBACK: a second replica waits here, then finds the versions applied.
                _ = try await connection.query("SELECT pg_advisory_xact_lock(\(advisoryLockKey))")
                _ = try await connection.query(
                    """
                    CREATE TABLE IF NOT EXISTS schema_migrations (
                        version integer PRIMARY KEY,
                        applied_at timestamptz NOT NULL DEFAULT now()
                    )
                    """)
                let rows = try await connection.query("SELECT coalesce(max(version), 0) FROM schema_migrations")
                let current = rows.rows.first?.int(0) ?? 0
                if current > known { throw PostgresSchemaError.newerSentinel(current) }
                var applied: [Int] = []
                for migration in migrations where migration.version > current {
                    for statement in migration.statements { _ = try await connection.query(statement) }
                    _ = try await connection.query("INSERT INTO schema_migrations (version) VALUES ($1)", [.int(migration.version)])
                    applied.append(migration.version)
                }
                return applied
            }
        } catch {
            if let found = PostgresSchemaError.newerFound(in: error) { throw .newerThanKnown(found: found, known: known) }
            throw .postgres(error)
        }
    }

    /// The newest version applied to the database, 0 when it has none.
    public static func currentVersion(_ client: PostgresClient) async throws(PostgresError) -> Int {
        let exists = try await client.query("SELECT to_regclass('schema_migrations') IS NOT NULL")
        guard exists.rows.first?.bool(0) == true else { return 0 }
        return try await client.query("SELECT coalesce(max(version), 0) FROM schema_migrations").rows.first?.int(0) ?? 0
    }
}

/// Why the schema could not be brought to this binary's version.
public enum PostgresSchemaError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The database was migrated by a newer broker (version `found`) than this one, which knows up to `known`.
    case newerThanKnown(found: Int, known: Int)
    /// PostgreSQL failed (unreachable, refused, a statement failed); nothing of the migration was kept.
    case postgres(PostgresError)

    public var description: String {
        switch self {
        case .newerThanKnown(let found, let known):
            return "the PostgreSQL schema is at version \(found), newer than this broker knows (\(known)): "
                + "run the newer broker, or restore a backup taken before it migrated"
        case .postgres(let error):
            return "migrating the PostgreSQL schema failed: \(error)"
        }
    }

    /// The error that rolls the migration's transaction back when the schema is newer; carries the version found.
    fileprivate static func newerSentinel(_ found: Int) -> PostgresError {
        .configuration("schema version \(found) is newer than this broker knows")
    }

    /// The version carried by ``newerSentinel(_:)``, or nil for any other error.
    fileprivate static func newerFound(in error: PostgresError) -> Int? {
        guard case .configuration(let message) = error, message.hasPrefix("schema version "),
            message.hasSuffix(" is newer than this broker knows")
        else { return nil }
        return Int(message.dropFirst("schema version ".count).prefix { $0.isNumber })
    }
}
