import BrokerCore
import Foundation
import Synchronization

extension PostgresError {
    /// The store error a PostgreSQL store reports: always ``StoreError/unavailable(_:)`` (503 `storage_unavailable`).
    ///
    /// The description names the server and the SQLSTATE, never a bound value (a row's detail is not printed).
    var storeError: StoreError { .unavailable(description) }

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

extension PostgresClient {
    /// Runs one statement, reporting a failure as a ``StoreError``.
    func storeQuery(_ sql: String, _ parameters: [PostgresValue] = []) async throws(StoreError) -> PostgresRows {
        do {
            return try await query(sql, parameters)
        } catch {
            throw error.storeError
        }
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
