/// The isolation level of an explicit transaction (PostgreSQL's `SET TRANSACTION`).
public enum PostgresIsolation: String, Sendable {
    case readCommitted = "READ COMMITTED"
    case repeatableRead = "REPEATABLE READ"
    case serializable = "SERIALIZABLE"
}

extension PostgresClient {
    /// Runs `body` inside `BEGIN … COMMIT` on one pooled session: committed when `body` returns, rolled back when
    /// it throws (the error is rethrown) or when a statement in it failed.
    ///
    /// A COMMIT whose connection is lost is ``PostgresError/connectionLost(_:)``: its outcome is unknown, so what
    /// the transaction writes should be safe to write again. Serialization failures (40001) are thrown for the
    /// caller to retry the whole transaction.
    public func transaction<T>(
        isolation: PostgresIsolation = .readCommitted, timeout: Double? = nil,
        _ body: (PostgresConnection) async throws(PostgresError) -> T
    ) async throws(PostgresError) -> T {
        try await withConnection(timeout: timeout) { (connection) async throws(PostgresError) -> T in
            _ = try await connection.query("BEGIN ISOLATION LEVEL \(isolation.rawValue)", timeout: timeout)
            let value: T
            do throws(PostgresError) {
                value = try await body(connection)
            } catch {
                await connection.rollbackIfOpen()
                throw error
            }
            let commit = try await connection.query("COMMIT", timeout: timeout)
            // COMMIT of a transaction in which a statement failed (and `body` went on) rolls back and says so.
            guard commit.commandTag == "COMMIT" else {
                throw .server(
                    PostgresServerError(
                        severity: "ERROR", code: "25P02", message: "a statement of the transaction failed, so COMMIT rolled it back"))
            }
            return value
        }
    }
}

extension PostgresConnection {
    /// Rolls back an open transaction, if the session is still up and in one; errors are ignored (a broken
    /// session has no transaction left to roll back).
    func rollbackIfOpen() async {
        let inTransaction = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: self.fd >= 0 && self.transactionStatus != UInt8(ascii: "I")) }
        }
        guard inTransaction else { return }
        _ = try? await query("ROLLBACK", timeout: configuration.connectTimeout)
    }
}
