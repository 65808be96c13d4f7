import BrokerPostgres
import BrokerTestSupport
import Testing

/// Explicit transactions on a real server: commit, rollback on a thrown error, and a lock held until the end.
@Suite(.scoped) struct PostgresTransactionTests {
    @Test func aTransactionCommitsWhenItsBodyReturnsAndRollsBackWhenItThrows() async throws {
        let server = try await PostgresServer.scoped()
        let client = try server.client(poolSize: 1)
        _ = try await client.query("CREATE TABLE ledger (k text PRIMARY KEY)")
        try await client.transaction { (connection) async throws(PostgresError) in
            _ = try await connection.query("INSERT INTO ledger VALUES ($1)", [.text("a")])
            _ = try await connection.query("INSERT INTO ledger VALUES ($1)", [.text("b")])
        }
        let error = await #expect(throws: PostgresError.self) {
            try await client.transaction(isolation: .serializable) { (connection) async throws(PostgresError) in
                _ = try await connection.query("INSERT INTO ledger VALUES ($1)", [.text("c")])
                _ = try await connection.query("INSERT INTO ledger VALUES ($1)", [.text("a")])
            }
        }
        guard case .uniqueViolation? = error else {
            Issue.record("expected uniqueViolation, got \(String(describing: error))")
            return
        }
        // The same session (a pool of one) is out of the failed transaction: `c` is gone and statements run again.
        #expect(try await client.query("SELECT k FROM ledger ORDER BY k").rows.map { $0.string(0) } == ["a", "b"])
    }

    @Test func aBodyThatSwallowsAFailedStatementDoesNotCommit() async throws {
        let server = try await PostgresServer.scoped()
        let client = try server.client(poolSize: 1)
        _ = try await client.query("CREATE TABLE ledger (k text PRIMARY KEY)")
        let error = await #expect(throws: PostgresError.self) {
            try await client.transaction { (connection) async throws(PostgresError) in
                _ = try await connection.query("INSERT INTO ledger VALUES ($1)", [.text("x")])
                _ = try? await connection.query("SELECT 1/0")
            }
        }
        guard case .server(let fields)? = error else {
            Issue.record("expected a server error, got \(String(describing: error))")
            return
        }
        #expect(fields.code == "25P02")
        #expect(try await client.query("SELECT count(*) FROM ledger").rows.first?.int(0) == 0)
    }

    @Test func anAdvisoryTransactionLockIsHeldUntilTheTransactionEnds() async throws {
        let server = try await PostgresServer.scoped()
        let client = try server.client(poolSize: 1)
        let other = try server.client(poolSize: 1)
        try await client.transaction { (connection) async throws(PostgresError) in
            #expect(try await connection.query("SELECT pg_try_advisory_xact_lock($1)", [.int(42)]).rows.first?.bool(0) == true)
            #expect(try await other.query("SELECT pg_try_advisory_xact_lock($1)", [.int(42)]).rows.first?.bool(0) == false)
        }
        #expect(try await other.query("SELECT pg_try_advisory_xact_lock($1)", [.int(42)]).rows.first?.bool(0) == true)
    }
}
