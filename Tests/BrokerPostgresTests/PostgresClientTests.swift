import BrokerCore
import BrokerPostgres
import BrokerTestSupport
import Foundation
import Testing

/// The client against a real PostgreSQL server each test starts: login, statements, errors, cancellation, crashes.
@Suite(.scoped) struct PostgresClientTests {
    @Test func scramLoginSucceedsAndReportsTheSession() async throws {
        let server = try await PostgresServer.scoped()
        let client = try server.client()
        let rows = try await client.query("SELECT current_user, $1::text", [.text("hello")])
        #expect(rows.columns == ["current_user", "text"])
        #expect(rows.rows.first?.string(0) == "postgres")
        #expect(rows.rows.first?.string(1) == "hello")
        // The login really was SCRAM: the server stores only a SCRAM verifier for the superuser.
        let verifier = try await client.query("SELECT rolpassword FROM pg_authid WHERE rolname = 'postgres'")
        #expect(verifier.rows.first?.string(0)?.hasPrefix("SCRAM-SHA-256$") == true)
        let parameters = try await client.withConnection { (connection) async throws(PostgresError) in
            await connection.serverParameters()
        }
        #expect(parameters["server_version"] != nil)
        #expect(parameters["client_encoding"] == "UTF8")
    }

    @Test func aWrongPasswordIsAnAuthenticationErrorThatNeverQuotesIt() async throws {
        let server = try await PostgresServer.scoped()
        let client = try PostgresClient(configuration: server.configuration(password: "wrong-horse-battery"))
        let error = await #expect(throws: PostgresError.self) { _ = try await client.query("SELECT 1") }
        guard case .authenticationFailed(let fields)? = error else {
            Issue.record("expected authenticationFailed, got \(String(describing: error))")
            return
        }
        #expect(fields.code == "28P01")
        #expect(!"\(error!)".contains("wrong-horse-battery"))
        #expect(!"\(error!)".contains(server.superuserPassword))
    }

    @Test func md5IsRefusedUnlessAllowedAndCleartextAlways() async throws {
        let server = try await PostgresServer.scoped()
        let refused = try PostgresClient(configuration: server.configuration(user: PostgresServer.md5User))
        let error = await #expect(throws: PostgresError.self) { _ = try await refused.query("SELECT 1") }
        guard case .authenticationRefused(let message)? = error else {
            Issue.record("expected authenticationRefused, got \(String(describing: error))")
            return
        }
        #expect(message.contains("md5"))

        let allowed = try PostgresClient(configuration: server.configuration(user: PostgresServer.md5User, allowMD5: true))
        #expect(try await allowed.query("SELECT current_user").rows.first?.string(0) == PostgresServer.md5User)

        let cleartext = try PostgresClient(configuration: server.configuration(user: PostgresServer.cleartextUser, allowMD5: true))
        let cleartextError = await #expect(throws: PostgresError.self) { _ = try await cleartext.query("SELECT 1") }
        guard case .authenticationRefused? = cleartextError else {
            Issue.record("expected authenticationRefused, got \(String(describing: cleartextError))")
            return
        }
    }

    @Test func preparedStatementsRoundTripTextByteaAndNullAndArePreparedOnce() async throws {
        let server = try await PostgresServer.scoped()
        let client = try server.client(poolSize: 1)
        _ = try await client.query("CREATE TABLE items (id bigint PRIMARY KEY, name text, body bytea)")
        let every = [UInt8](0...255)
        let insert = "INSERT INTO items (id, name, body) VALUES ($1, $2, $3)"
        _ = try await client.query(insert, [.int(1), .text("zoë \"quoted\" \\ 'x' ,;"), .bytea(every)])
        _ = try await client.query(insert, [.int(2), .null, .null])
        _ = try await client.query(insert, [.int(3), .text(""), .bytea([])])
        let rows = try await client.query("SELECT id, name, body FROM items WHERE id >= $1 ORDER BY id", [.int(1)])
        #expect(rows.rows.map { $0.int(0) } == [1, 2, 3])
        #expect(rows.rows[0].string(1) == "zoë \"quoted\" \\ 'x' ,;")
        #expect(rows.rows[0].bytea(2) == every)
        #expect(rows.rows[1][1] == nil && rows.rows[1][2] == nil)
        #expect(rows.rows[2].string(1) == "" && rows.rows[2].bytea(2) == [])
        #expect(try await client.query("SELECT $1::boolean", [.bool(true)]).rows.first?.bool(0) == true)
        // The INSERT ran three times on one session and was parsed once: one named statement for its text.
        let prepared = try await client.query("SELECT count(*) FROM pg_prepared_statements WHERE statement = $1", [.text(insert)])
        #expect(prepared.rows.first?.int(0) == 1)
    }

    @Test func eachSegmentOfAPipelineIsATransactionOfItsOwnAndAFailedOneDoesNotStopTheNext() async throws {
        let server = try await PostgresServer.scoped()
        let client = try server.client(poolSize: 1)
        _ = try await client.query("CREATE TABLE t (k text PRIMARY KEY)")
        _ = try await client.query("INSERT INTO t VALUES ('taken')")
        // The first segment fails and rolls back alone; the second still runs and commits; the first error is thrown.
        let error = await #expect(throws: PostgresError.self) {
            _ = try await client.pipeline(segments: [
                [
                    PostgresQuery("INSERT INTO t VALUES ($1)", [.text("first")]),
                    PostgresQuery("INSERT INTO t VALUES ($1)", [.text("taken")]),
                ],
                [PostgresQuery("INSERT INTO t VALUES ($1)", [.text("second")])],
            ])
        }
        guard case .uniqueViolation? = error else {
            Issue.record("expected uniqueViolation, got \(String(describing: error))")
            return
        }
        #expect(try await client.query("SELECT k FROM t ORDER BY k").rows.map { $0.string(0) } == ["second", "taken"])
        // An explicit transaction's COMMIT in one segment, an asynchronous commit in the next: its setting lasts for
        // its own transaction only, and the pooled session keeps the server's default.
        let results = try await client.pipeline(segments: [
            [PostgresQuery("BEGIN"), PostgresQuery("INSERT INTO t VALUES ($1)", [.text("third")]), PostgresQuery("COMMIT")],
            [PostgresQuery("SELECT set_config('synchronous_commit', 'off', true)"), PostgresQuery("SHOW synchronous_commit")],
        ])
        #expect(results.map { $0.map(\.commandTag) } == [["BEGIN", "INSERT 0 1", "COMMIT"], ["SELECT 1", "SHOW"]])
        #expect(results[1][1].rows.first?.string(0) == "off")
        #expect(try await client.query("SHOW synchronous_commit").rows.first?.string(0) == "on")
        #expect(try await client.query("SELECT count(*) FROM t").rows.first?.int(0) == 3)
    }

    @Test func anErrorMidPipelineRollsBackThePipelineAndLeavesTheConnectionUsable() async throws {
        let server = try await PostgresServer.scoped()
        let client = try server.client(poolSize: 1)
        _ = try await client.query("CREATE TABLE t (k text PRIMARY KEY)")
        _ = try await client.query("INSERT INTO t VALUES ('taken')")
        let error = await #expect(throws: PostgresError.self) {
            _ = try await client.pipeline([
                PostgresQuery("INSERT INTO t VALUES ($1)", [.text("first")]),
                PostgresQuery("INSERT INTO t VALUES ($1)", [.text("taken")]),
                PostgresQuery("INSERT INTO t VALUES ($1)", [.text("after")]),
            ])
        }
        guard case .uniqueViolation(let fields)? = error else {
            Issue.record("expected uniqueViolation, got \(String(describing: error))")
            return
        }
        #expect(fields.constraint == "t_pkey")
        // Same session (a pool of one), still in step; the pipeline was one transaction, so `first` is gone too.
        let keys = try await client.query("SELECT k FROM t ORDER BY k")
        #expect(keys.rows.map { $0.string(0) } == ["taken"])
        let results = try await client.pipeline([
            PostgresQuery("INSERT INTO t VALUES ($1)", [.text("a")]), PostgresQuery("INSERT INTO t VALUES ($1)", [.text("b")]),
            PostgresQuery("SELECT count(*) FROM t"),
        ])
        #expect(results.map(\.commandTag) == ["INSERT 0 1", "INSERT 0 1", "SELECT 1"])
        #expect(results[2].rows.first?.int(0) == 3)
        // A syntax error in a new statement is a server error and leaves nothing half-prepared behind.
        await #expect(throws: PostgresError.self) { _ = try await client.query("SELEKT 1") }
        #expect(try await client.query("SELECT 1").rows.first?.int(0) == 1)
    }

    @Test func aStatementPastItsDeadlineIsCancelledAndTheSessionStaysUsable() async throws {
        let server = try await PostgresServer.scoped()
        let client = try server.client(poolSize: 1)
        let pid = try await client.query("SELECT pg_backend_pid()").rows.first?.int(0)
        let error = await #expect(throws: PostgresError.self) { _ = try await client.query("SELECT pg_sleep(30)", timeout: 0.5) }
        #expect(error == .deadlineExceeded(cancelled: true))
        // The same backend answers next (the session survived the cancel), and no pg_sleep runs any more.
        #expect(try await client.query("SELECT pg_backend_pid()").rows.first?.int(0) == pid)
        let sleeping = try await client.query("SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(30)%'")
        #expect(sleeping.rows.first?.int(0) == 0)
    }

    @Test func aServerKilledMidQueryIsConnectionLostAndThePoolReconnects() async throws {
        let server = try await PostgresServer.scoped()
        let client = try server.client(poolSize: 2)
        _ = try await client.query("CREATE TABLE kept (n int)")
        _ = try await client.query("INSERT INTO kept VALUES (1)")
        let inFlight = Task { () async throws(PostgresError) -> PostgresRows in try await client.query("SELECT pg_sleep(30)") }
        guard try await killWhileSleeping(server, inFlight) else { return }
        let recovered = await eventually(interval: 0.1) { (try? await client.query("SELECT count(*) FROM kept")) != nil }
        #expect(recovered, "the pool did not reconnect after the server came back")
        #expect(try await client.query("SELECT n FROM kept").rows.first?.int(0) == 1)
    }

    @Test func thePoolNeverExceedsItsSizeUnderFiftyConcurrentQueries() async throws {
        let server = try await PostgresServer.scoped()
        let size = 4
        let client = try server.client(poolSize: size, applicationName: "pool-bound-test")
        // Each query counts, on the server, the sessions this pool has open at that moment.
        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    let rows = try await client.query(
                        "SELECT count(*) FROM pg_stat_activity, pg_sleep(0.02) WHERE application_name = 'pool-bound-test'")
                    return rows.rows.first?.int(0) ?? -1
                }
            }
            var counts: [Int] = []
            for try await count in group { counts.append(count) }
            return counts
        }
        #expect(counts.count == 50)
        #expect(counts.allSatisfy { (1...size).contains($0) }, "sessions seen: \(counts.sorted())")
        let statistics = client.poolStatistics
        #expect(statistics.highWater <= size)
        #expect(statistics.waits > 0)
        #expect(statistics.inUse == 0)
    }

    @Test func aPoolWaitEndsAtItsDeadline() async throws {
        let server = try await PostgresServer.scoped()
        let client = try server.client(poolSize: 1)
        let holding = Task { try await client.query("SELECT pg_sleep(30)", timeout: 120) }
        let busy = await eventually { client.poolStatistics.inUse == 1 }
        #expect(busy)
        let error = await #expect(throws: PostgresError.self) { _ = try await client.query("SELECT 1", timeout: 0.2) }
        #expect(error == .poolExhausted)
        holding.cancel()
        _ = try? await server.client(poolSize: 1).query(
            "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(30)'")
        _ = await holding.result
    }

    /// The pool's one timer serves every wait: a task that arrives later with a shorter deadline ends at its own
    /// deadline, and the earlier task, still waiting, gets the connection once it is released.
    @Test func poolWaitsWithDifferentDeadlinesEachEndAtTheirOwn() async throws {
        let server = try await PostgresServer.scoped()
        let client = try server.client(poolSize: 1)
        let holding = Task { try await client.query("SELECT pg_sleep(30)", timeout: 120) }
        #expect(await eventually { client.poolStatistics.inUse == 1 })
        let patient = Task { try await client.query("SELECT 7", timeout: 60) }
        #expect(await eventually { client.poolStatistics.waits == 1 })
        let error = await #expect(throws: PostgresError.self) { _ = try await client.query("SELECT 1", timeout: 0.2) }
        #expect(error == .poolExhausted)
        #expect(client.poolStatistics.timeouts == 1)
        _ = try await server.client(poolSize: 1).query(
            "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(30)'")
        _ = await holding.result
        #expect(try await patient.value.rows.first?.int(0) == 7)
        #expect(client.poolStatistics.inUse == 0)
    }

    @Test func readWriteSkipsAnUnreachableHostAndARead_onlyOne() async throws {
        let server = try await PostgresServer.scoped()
        _ = try await server.client().query("CREATE ROLE reader LOGIN PASSWORD 'reader-pass'")
        _ = try await server.client().query("ALTER ROLE reader SET default_transaction_read_only = on")
        try await Loopback.withRefusingPort { refusing in
            var configuration = server.configuration()
            configuration.endpoints = [.init(host: "127.0.0.1", port: refusing), .init(host: "127.0.0.1", port: server.port)]
            configuration.targetSessionAttributes = .readWrite
            let client = try PostgresClient(configuration: configuration)
            #expect(try await client.query("SELECT 1").rows.first?.int(0) == 1)

            var readOnly = server.configuration(user: "reader", password: "reader-pass")
            readOnly.targetSessionAttributes = .readWrite
            let error = await #expect(throws: PostgresError.self) {
                _ = try await PostgresClient(configuration: readOnly).query("SELECT 1")
            }
            guard case .unavailable(let message)? = error else {
                Issue.record("expected unavailable, got \(String(describing: error))")
                return
            }
            #expect(message.contains("read-only"))
            // Without read-write the same server is fine, and a write there is the typed read-only error.
            readOnly.targetSessionAttributes = .any
            let anyClient = try PostgresClient(configuration: readOnly)
            let writeError = await #expect(throws: PostgresError.self) { _ = try await anyClient.query("CREATE TABLE nope (x int)") }
            guard case .readOnly(let fields)? = writeError else {
                Issue.record("expected readOnly, got \(String(describing: writeError))")
                return
            }
            #expect(fields.code == "25006")
        }
    }

    @Test func anAdministratorTerminatingTheSessionIsTypedAndThePoolReconnects() async throws {
        let server = try await PostgresServer.scoped()
        let client = try server.client(poolSize: 1)
        let pid = try #require(try await client.query("SELECT pg_backend_pid()").rows.first?.int(0))
        let inFlight = Task { () async throws(PostgresError) -> PostgresRows in try await client.query("SELECT pg_sleep(30)") }
        let admin = try server.client(poolSize: 1)
        let running = await eventually {
            let rows = try? await admin.query("SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(30)'")
            return rows?.rows.first?.int(0) == 1
        }
        #expect(running)
        _ = try await admin.query("SELECT pg_terminate_backend($1)", [.int(pid)])
        let result = await inFlight.result
        guard case .failure(let error) = result, case .serverShutdown(let fields)? = error as? PostgresError else {
            Issue.record("expected serverShutdown, got \(result)")
            return
        }
        #expect(fields.code == "57P01")
        #expect(try await client.query("SELECT pg_backend_pid()").rows.first?.int(0) != pid)
    }
}

extension PostgresClientTests {
    @Test func aStatementPreparedBeforeItsTableChangedIsPreparedAgain() async throws {
        let server = try await PostgresServer.scoped()
        let client = try server.client(poolSize: 1)
        _ = try await client.query("CREATE TABLE shape (a int)")
        _ = try await client.query("INSERT INTO shape VALUES (1)")
        #expect(try await client.query("SELECT * FROM shape").columns == ["a"])
        _ = try await client.query("ALTER TABLE shape ADD COLUMN b text DEFAULT 'x'")
        // The cached plan's result type changed (0A000): the client re-prepares once instead of failing.
        let rows = try await client.query("SELECT * FROM shape")
        #expect(rows.columns == ["a", "b"])
        #expect(rows.rows.first?.string(1) == "x")
    }
}

extension PostgresClientTests {
    @Test func aCancelledTaskStopsItsStatementAndTheSessionStaysUsable() async throws {
        let server = try await PostgresServer.scoped()
        let client = try server.client(poolSize: 1)
        let pid = try await client.query("SELECT pg_backend_pid()").rows.first?.int(0)
        let observer = try server.client(poolSize: 1)
        let inFlight = Task { () async throws(PostgresError) -> PostgresRows in try await client.query("SELECT pg_sleep(30)") }
        let running = await eventually {
            let rows = try? await observer.query("SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(30)'")
            return rows?.rows.first?.int(0) == 1
        }
        #expect(running)
        // A second task waits for the pool's only connection; cancelled, it gives up without running anything.
        let waiting = Task { () async throws(PostgresError) -> PostgresRows in try await client.query("SELECT 'never'") }
        #expect(await eventually { client.poolStatistics.waits == 1 })
        waiting.cancel()
        guard case .failure(let waitError) = await waiting.result, waitError as? PostgresError == .cancelled(stopped: true) else {
            Issue.record("the waiting task did not end as cancelled")
            return
        }
        inFlight.cancel()
        guard case .failure(let error) = await inFlight.result, error as? PostgresError == .cancelled(stopped: true) else {
            Issue.record("the running task did not end as cancelled with its statement stopped")
            return
        }
        #expect(try await client.query("SELECT pg_backend_pid()").rows.first?.int(0) == pid)
        let sleeping = try await observer.query("SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(30)'")
        #expect(sleeping.rows.first?.int(0) == 0)
        #expect(client.poolStatistics.inUse == 0)
    }
}

/// Kills `server` once another session sees `SELECT pg_sleep(30)` running on it, expects `inFlight` to end with
/// `connectionLost`, and starts the server again; false, with the issue recorded, when the run ended otherwise.
func killWhileSleeping<T: Sendable>(_ server: PostgresServer, _ inFlight: Task<T, any Error>) async throws -> Bool {
    let observer = try server.client(poolSize: 1)
    let running = await eventually {
        let rows = try? await observer.query("SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(30)'")
        return rows?.rows.first?.int(0) == 1
    }
    #expect(running)
    await server.kill()
    let result = await inFlight.result
    guard case .failure(let error) = result, case .connectionLost? = error as? PostgresError else {
        Issue.record("expected connectionLost, got \(result)")
        return false
    }
    try await server.restart()
    return true
}
