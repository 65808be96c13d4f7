import BrokerCore
import Foundation
import Synchronization

extension PostgresError {
    /// The store error a PostgreSQL store reports: always ``StoreError/unavailable(_:)`` (503 `storage_unavailable`).
    ///
    /// The description names the server and the SQLSTATE, never a bound value (a row's detail is not printed).
    var storeError: StoreError { .unavailable(description) }

    /// Whether the statement may have run although no answer came: the connection broke or was closed while it was
    /// in flight. Refusals, server errors and a statement stopped by a CancelRequest are not.
    var outcomeUnknown: Bool {
        switch self {
        case .connectionLost, .protocolError, .serverShutdown: return true
        case .deadlineExceeded(let cancelled): return !cancelled
        case .cancelled(let stopped): return !stopped
        case .unavailable, .authenticationFailed, .authenticationRefused, .poolExhausted, .uniqueViolation, .serializationFailure,
            .readOnly, .queryCancelled, .server, .configuration:
            return false
        }
    }

    /// Whether running the whole transaction again may succeed: another writer came first (a row inserted meanwhile,
    /// a serialization failure or a deadlock).
    var isRetryable: Bool {
        switch self {
        case .uniqueViolation, .serializationFailure: return true
        default: return false
        }
    }
}

/// Milliseconds since 1970, the unit of every time column; clamped so no date can trap the conversion.
func milliseconds(_ date: Date) -> Int {
    let value = (date.timeIntervalSince1970 * 1000).rounded(.down)
    guard value.isFinite else { return value > 0 ? Int(1e15) : Int(-1e15) }
    return Int(min(max(value, -1e15), 1e15))
}

/// How long a write's COMMIT waits before it is answered.
///
/// `synchronous`: until the WAL is flushed and, with a synchronous standby,
/// until the standby has it (`synchronous_commit` as the server sets it). An
/// account and the webhook rows of its change are written so: an acknowledged
/// sign-in or refresh survives a crash and a failover.
///
/// `asynchronous`: the transaction sets `synchronous_commit = off` for itself
/// only, so its COMMIT returns once the WAL is written to the server's memory;
/// the WAL writer flushes it within `3 × wal_writer_delay` (600 ms by default).
/// For writes whose loss in a crash costs nothing a user must not lose:
/// - a pending flow and its pending outcome: lost, the callback answers
///   `invalid_state` and the user signs in again;
/// - the take of a flow (`DELETE … RETURNING`): the WAL is one ordered stream,
///   so the synchronous COMMIT of the account that follows a successful
///   callback flushes (and ships to the standby) the take before it too; only
///   the take of a callback that failed can come back, and its authorization
///   code is spent at the provider (RFC 6749 §4.1.2), while its state stays
///   bound to the browser that started it;
/// - a flow's final outcome, written after the account: lost, `GET /flows/{state}`
///   reads the flow as pending, then expired, while the account and its
///   `account.connected` event are durable;
/// - the NOTIFY that tells other replicas' caches an account changed, in a
///   transaction of its own right after the account's COMMIT (see
///   ``PostgresAccountRepository/notify(_:)``): a crash that loses it also
///   ends every listening session, and a cache whose session ends is emptied.
enum PostgresCommit {
    case synchronous
    case asynchronous

    /// The statement that makes the rest of its implicit transaction commit asynchronously (`set_config` with
    /// `is_local`: the setting ends with the transaction, so the pooled session keeps the server's default).
    static let asynchronousCommit = PostgresQuery("SELECT set_config('synchronous_commit', 'off', true)")
}

extension PostgresClient {
    /// Runs one statement in a transaction of its own, reporting a failure as a ``StoreError``; with `commit:
    /// .asynchronous`, that transaction's COMMIT does not wait for the WAL flush (see ``PostgresCommit``), in the
    /// same round trip.
    func storeQuery(_ sql: String, _ parameters: [PostgresValue] = [], commit: PostgresCommit = .synchronous) async throws(StoreError)
        -> PostgresRows
    {
        do {
            switch commit {
            case .synchronous:
                return try await query(sql, parameters)
            case .asynchronous:
                return try await pipeline([PostgresCommit.asynchronousCommit, PostgresQuery(sql, parameters)])[1]
            }
        } catch {
            throw error.storeError
        }
    }

    /// A read-then-write transaction in two round trips: `BEGIN` and `read` in the first; then the writes `decide`
    /// returns for the rows read, with `COMMIT`, and after the COMMIT, in a transaction of its own committed
    /// asynchronously, its `afterCommit` statements, in the second. Nothing can come between the COMMIT and
    /// `afterCommit`: the server has both before it answers either.
    ///
    /// Run again from the start when PostgreSQL says another writer came first (up to `attempts` times); rolled
    /// back when `decide` or a statement throws. `decide` throws ``StoreError``s of its own.
    func storeReadWriteTransaction<T: Sendable>(
        attempts: Int = 20, read: PostgresQuery,
        _ decide: @Sendable (PostgresRows) throws -> (value: T, writes: [PostgresQuery], afterCommit: [PostgresQuery])
    ) async throws(StoreError) -> T {
        var last: PostgresError = .poolExhausted
        for _ in 0..<max(1, attempts) {
            let outcome: Result<T, any Error>
            do {
                outcome = try await withConnection { (connection) async throws(PostgresError) -> Result<T, any Error> in
                    let deadline = PostgresSocket.deadline(in: configuration.statementTimeout)
                    do throws(PostgresError) {
                        let rows = try await connection.run([PostgresQuery("BEGIN"), read], deadline: deadline)[1]
                        let decided: (value: T, writes: [PostgresQuery], afterCommit: [PostgresQuery])
                        do {
                            decided = try decide(rows)
                        } catch {
                            await connection.rollbackIfOpen()
                            return .failure(error)
                        }
                        var segments = [decided.writes + [PostgresQuery("COMMIT")]]
                        if !decided.afterCommit.isEmpty { segments.append([PostgresCommit.asynchronousCommit] + decided.afterCommit) }
                        let results = try await connection.run(segments: segments, deadline: deadline)
                        // COMMIT of a transaction in which a statement failed rolls back and says so.
                        guard results[0].last?.commandTag == "COMMIT" else {
                            return .failure(
                                PostgresError.server(
                                    PostgresServerError(severity: "ERROR", code: "25P02", message: "COMMIT rolled the transaction back")))
                        }
                        return .success(decided.value)
                    } catch {
                        await connection.rollbackIfOpen()
                        guard error.isRetryable else { throw error }
                        return .failure(error)
                    }
                }
            } catch {
                throw error.storeError
            }
            switch outcome {
            case .success(let value):
                return value
            case .failure(let error as StoreError):
                throw error
            case .failure(let error as PostgresError):
                guard error.isRetryable else { throw error.storeError }
                last = error
            case .failure(let error):
                throw .unavailable("postgres transaction: \(error)")
            }
        }
        throw .unavailable("postgres transaction: \(attempts) attempts in a row lost to concurrent writers (\(last))")
    }

    /// Runs `body` in `BEGIN … COMMIT` on one session, again from the start when PostgreSQL says another writer came
    /// first (up to `attempts` times); rolled back when `body` throws.
    ///
    /// `body` throws ``StoreError``s of its own and ``PostgresError``s of its statements; the latter become
    /// ``StoreError/unavailable(_:)`` once no retry is left or when they are not retryable.
    func storeTransaction<T: Sendable>(
        attempts: Int = 20, _ body: @Sendable (PostgresConnection) async throws -> T
    ) async throws(StoreError) -> T {
        var last: PostgresError = .poolExhausted
        for _ in 0..<max(1, attempts) {
            let outcome: Result<T, any Error>
            do {
                outcome = try await withConnection { (connection) async throws(PostgresError) -> Result<T, any Error> in
                    _ = try await connection.query("BEGIN")
                    let value: T
                    do {
                        value = try await body(connection)
                    } catch {
                        await connection.rollbackIfOpen()
                        return .failure(error)
                    }
                    let commit = try await connection.query("COMMIT")
                    guard commit.commandTag == "COMMIT" else {
                        return .failure(
                            PostgresError.server(
                                PostgresServerError(severity: "ERROR", code: "25P02", message: "COMMIT rolled the transaction back")))
                    }
                    return .success(value)
                }
            } catch {
                throw error.storeError
            }
            switch outcome {
            case .success(let value):
                return value
            case .failure(let error as StoreError):
                throw error
            case .failure(let error as PostgresError):
                guard error.isRetryable else { throw error.storeError }
                last = error
            case .failure(let error):
                throw .unavailable("postgres transaction: \(error)")
            }
        }
        throw .unavailable("postgres transaction: \(attempts) attempts in a row lost to concurrent writers (\(last))")
    }
}

extension PostgresConnection {
    /// Runs one statement inside a transaction body, throwing the ``PostgresError`` untyped for ``PostgresClient/storeTransaction(attempts:_:)``.
    func run(_ sql: String, _ parameters: [PostgresValue] = []) async throws -> PostgresRows {
        try await query(sql, parameters)
    }
}

/// A value a transaction's body sets and its caller reads after COMMIT (the body is `@Sendable` and may run again).
final class TransactionNote<Value: Sendable>: Sendable {
    private let stored: Mutex<Value>
    init(_ initial: Value) { stored = Mutex(initial) }
    var value: Value {
        get { stored.withLock { $0 } }
        set { stored.withLock { $0 = newValue } }
    }
}
