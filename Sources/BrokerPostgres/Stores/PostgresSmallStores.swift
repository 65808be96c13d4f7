import BrokerCore
import BrokerCrypto
import Foundation

/// The ``RefreshLock`` of every replica as a lease row in `refresh_locks`.
///
/// A lease row rather than `pg_try_advisory_lock`: an advisory lock belongs to a
/// session, so it would pin a pooled connection for the whole refresh and be
/// lost silently with it, while the seam's lock has a TTL and a token. The row's
/// expiry is on the server's clock, which every replica shares; an expired row
/// is taken over by the next `acquire`. A release that fails because the server
/// is away (a primary killed before its standby is promoted) is tried again once
/// it answers (``PendingLockReleases``), and so is the release of an acquire whose
/// answer was lost, so the next refresh does not wait out the TTL.
public final class PostgresRefreshLock: RefreshLock {
    /// The client the lock talks through.
    public let client: PostgresClient
    /// Releases that failed while the server was away, retried until it answers.
    public let pendingReleases: PendingLockReleases
    private let makeToken: @Sendable () -> String

    /// Creates the lock over `client`; `makeToken` makes each holder's token.
    public init(client: PostgresClient, makeToken: @escaping @Sendable () -> String = { SecureRandom.token(byteCount: 16) }) {
        self.client = client
        self.makeToken = makeToken
        pendingReleases = PendingLockReleases { [client] key, token throws(StoreError) in
            try await Self.delete(client, key: key, token: token)
        }
    }

    /// The server's clock in milliseconds since 1970.
    static let serverNow = "(extract(epoch from clock_timestamp()) * 1000)::bigint"

    /// Takes the lock for `ttl` seconds when no one holds it (or the holder's lease ran out); returns the token, else nil.
    public func acquire(key: String, ttl: Double) async throws(StoreError) -> String? {
        precondition(ttl.isFinite && ttl > 0, "PostgresRefreshLock.acquire: ttl must be a positive number of seconds")
        // This replica's own lock on `key` that it could not give back is freed first.
        await pendingReleases.flush(key: key)
        let token = makeToken()
        let rows: PostgresRows
        do {
            rows = try await client.query(
                """
                INSERT INTO refresh_locks (key, token, expires_at) VALUES ($1, $2, \(Self.serverNow) + $3)
                ON CONFLICT (key) DO UPDATE SET token = EXCLUDED.token, expires_at = EXCLUDED.expires_at
                WHERE refresh_locks.expires_at <= \(Self.serverNow)
                RETURNING token
                """, [.text(key), .text(token), .int(Int(min((ttl * 1000).rounded(.up), 1e12)))])
        } catch {
            // The row may be written with a token no one was given (a primary killed while the commit waited for
            // its synchronous standby): its release is retried too.
            if error.outcomeUnknown { pendingReleases.rememberUncertainAcquire(key: key, token: token) }
            throw error.storeError
        }
        return rows.rows.isEmpty ? nil : token
    }

    /// Releases the lock when `token` still holds it; returns whether it did.
    ///
    /// When the server does not answer, the release is remembered and tried again until it does, and the error is thrown.
    @discardableResult
    public func release(key: String, token: String) async throws(StoreError) -> Bool {
        do {
            return try await Self.delete(client, key: key, token: token)
        } catch {
            pendingReleases.remember(key: key, token: token)
            throw error
        }
    }

    /// Deletes the row of `key` when `token` holds it; returns whether it did.
    static func delete(_ client: PostgresClient, key: String, token: String) async throws(StoreError) -> Bool {
        let rows = try await client.storeQuery("DELETE FROM refresh_locks WHERE key = $1 AND token = $2", [.text(key), .text(token)])
        return rows.affectedRows == 1
    }
}

/// The ``RefreshBackoffStore`` of every replica: a row per account in `refresh_backoff`, forgotten `keep` after its `notBefore`.
public final class PostgresRefreshBackoffStore: RefreshBackoffStore {
    /// The client the store talks through.
    public let client: PostgresClient
    /// How long after `notBefore` a backoff is still remembered.
    public let keep: TimeInterval
    private let now: @Sendable () -> Date

    /// Creates the store over `client`; `now` is the clock rows are forgotten by.
    public init(
        client: PostgresClient, keep: TimeInterval = RefreshCoordinator.Policy.backoffKeep, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.client = client
        self.keep = max(0, keep)
        self.now = now
    }

    /// The backoff recorded for `accountID`, nil when none or forgotten.
    public func backoff(for accountID: String) async throws(StoreError) -> RefreshBackoff? {
        let rows = try await client.storeQuery(
            "SELECT record FROM refresh_backoff WHERE account_id = $1 AND forget_after > $2", [.text(accountID), .int(milliseconds(now()))])
        return rows.rows.first?.bytea(0).flatMap(RefreshBackoff.init(encoded:))
    }

    /// Records `backoff` for `accountID`, replacing any earlier one.
    public func record(_ backoff: RefreshBackoff, for accountID: String, at now: Date) async throws(StoreError) {
        _ = try await client.storeQuery(
            """
            INSERT INTO refresh_backoff (account_id, forget_after, record) VALUES ($1, $2, $3::bytea)
            ON CONFLICT (account_id) DO UPDATE SET forget_after = EXCLUDED.forget_after, record = EXCLUDED.record
            """, [.text(accountID), .int(milliseconds(backoff.notBefore.addingTimeInterval(keep))), .bytea(backoff.encoded)])
    }

    /// Forgets the backoff of `accountID`.
    public func clear(accountID: String) async throws(StoreError) {
        _ = try await client.storeQuery("DELETE FROM refresh_backoff WHERE account_id = $1", [.text(accountID)])
    }

    /// Forgets the backoff of `accountID` and returns it, in one `DELETE … RETURNING`.
    public func take(accountID: String) async throws(StoreError) -> RefreshBackoff? {
        let rows = try await client.storeQuery(
            "DELETE FROM refresh_backoff WHERE account_id = $1 RETURNING record, forget_after", [.text(accountID)])
        guard let row = rows.rows.first, let forgetAfter = row.int(1), forgetAfter > milliseconds(now()) else { return nil }
        return row.bytea(0).flatMap(RefreshBackoff.init(encoded:))
    }
}

/// The ``AppTokenStore`` of every replica: a row per provider and scope in `app_tokens`, sealed as in Redis.
public final class PostgresAppTokenStore: AppTokenStore {
    /// The client the store talks through.
    public let client: PostgresClient
    /// Seals the access token at rest when set.
    let sealer: EncryptedAccountCodec?
    private let now: @Sendable () -> Date

    /// Creates the store over `client`; `now` is the clock rows are forgotten by.
    public init(client: PostgresClient, sealer: EncryptedAccountCodec? = nil, now: @escaping @Sendable () -> Date = { Date() }) {
        self.client = client
        self.sealer = sealer
        self.now = now
    }

    /// The token stored under `key`, nil when none or past its keep time.
    public func token(for key: String) async throws(StoreError) -> AppToken? {
        let rows = try await client.storeQuery(
            "SELECT record FROM app_tokens WHERE key = $1 AND keep_until > $2", [.text(key), .int(milliseconds(now()))])
        guard let row = rows.rows.first else { return nil }
        let path = "postgres app_tokens row \(key)"
        guard let bytes = row.bytea(0) else { throw .corrupt(path: path, reason: "the record is not bytea") }
        return try AppTokenCodec.decode(bytes, key: key, path: path, sealer: sealer)
    }

    /// Stores `token` until `keepUntil`, replacing the one under its key; nothing when `keepUntil` is not after `now`.
    public func store(_ token: AppToken, keepUntil: Date, at now: Date) async throws(StoreError) {
        guard keepUntil > now else { return }
        _ = try await client.storeQuery(
            """
            INSERT INTO app_tokens (key, keep_until, record) VALUES ($1, $2, $3::bytea)
            ON CONFLICT (key) DO UPDATE SET keep_until = EXCLUDED.keep_until, record = EXCLUDED.record
            """, [.text(token.key), .int(milliseconds(keepUntil)), .bytea(AppTokenCodec.encode(token, sealer: sealer))])
    }
}

/// The ``ClientRegistrationStore`` of every replica: a row per registration in `client_registrations`, the secret sealed as in Redis.
///
/// ``add(_:)`` is `INSERT … ON CONFLICT DO NOTHING` and a read of what the table keeps, so the first replica's row stays.
public final class PostgresClientRegistrationStore: ClientRegistrationStore {
    /// The client the store talks through.
    public let client: PostgresClient
    /// Seals client secrets at rest when set.
    let sealer: EncryptedAccountCodec?

    /// Creates the store over `client`.
    public init(client: PostgresClient, sealer: EncryptedAccountCodec? = nil) {
        self.client = client
        self.sealer = sealer
    }

    /// The registration stored under `key`, nil when none.
    public func registration(for key: String) async throws(StoreError) -> ClientRegistration? {
        let rows = try await client.storeQuery("SELECT record FROM client_registrations WHERE key = $1", [.text(key)])
        guard let row = rows.rows.first else { return nil }
        let path = "postgres client_registrations row \(key)"
        guard let bytes = row.bytea(0) else { throw .corrupt(path: path, reason: "the record is not bytea") }
        return try ClientRegistrationCodec.decode(bytes, key: key, path: path, sealer: sealer)
    }

    /// Inserts `registration` unless its key has a row; returns the row kept.
    public func add(_ registration: ClientRegistration) async throws(StoreError) -> ClientRegistration {
        let key = registration.key
        let rows = try await client.storeQuery(
            """
            INSERT INTO client_registrations (key, registered_at, record) VALUES ($1, $2, $3::bytea)
            ON CONFLICT (key) DO NOTHING RETURNING key
            """,
            [
                .text(key), .int(milliseconds(registration.registeredAt)),
                .bytea(ClientRegistrationCodec.encode(registration, sealer: sealer)),
            ])
        if !rows.rows.isEmpty { return registration }
        guard let kept = try await self.registration(for: key) else {
            throw .unavailable("postgres: client_registrations row \(key) conflicted and is gone")
        }
        return kept
    }
}
