import BrokerCore
import BrokerHTTP
import BrokerPostgres
import BrokerTestSupport
import Foundation
import Testing

/// Statement round trips on the HTTP epoll workers (PostgresConnection+Epoll.swift) against a real server: the
/// failures met while the worker holds a run (the server killed between a pipeline's answers, a deadline between its
/// Syncs), a pipeline larger than the socket buffers (finished by the worker on EPOLLOUT), and a task that itself runs
/// on a worker (an `onWorker` HTTP route's handler).
@Suite(.scoped) struct PostgresWorkerPathTests {
    private static let pipeline = [
        [PostgresQuery("SELECT 1")], [PostgresQuery("SELECT pg_sleep(30)")], [PostgresQuery("SELECT 2")],
    ]

    @Test func aServerKilledBetweenAPipelinesAnswersIsConnectionLostAndThePoolReconnects() async throws {
        let server = try await PostgresServer.scoped()
        let client = try server.client(poolSize: 1)
        #expect(try await client.query("SELECT 1").rows.first?.int(0) == 1)
        let inFlight = Task { () async throws(PostgresError) -> [[PostgresRows]] in
            try await client.pipeline(segments: Self.pipeline)
        }
        // The first segment is answered (read by the worker) once the second runs on the server.
        guard try await killWhileSleeping(server, inFlight) else { return }
        let recovered = await eventually(interval: 0.1) { (try? await client.query("SELECT 3")) != nil }
        #expect(recovered, "the pool did not reconnect after the server came back")
        #expect(try await client.query("SELECT 4").rows.first?.int(0) == 4)
    }

    @Test func aDeadlineBetweenAPipelinesSyncsCancelsAndReadsEveryAnswerSoTheSessionStaysInStep() async throws {
        let server = try await PostgresServer.scoped()
        let client = try server.client(poolSize: 1)
        let pid = try await client.query("SELECT pg_backend_pid()").rows.first?.int(0)
        let error = await #expect(throws: PostgresError.self) {
            _ = try await client.pipeline(segments: Self.pipeline, timeout: 0.5)
        }
        #expect(error == .deadlineExceeded(cancelled: true))
        // The same session answers next, with its own answer: the third segment's reply was read before the run ended.
        let next = try await client.query("SELECT pg_backend_pid(), 'next'")
        #expect(next.rows.first?.int(0) == pid)
        #expect(next.rows.first?.string(1) == "next")
        let sleeping = try await client.query("SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(30)%'")
        #expect(sleeping.rows.first?.int(0) == 0)
    }

    @Test func aPipelineLargerThanTheSocketBuffersIsWrittenWhileItsAnswersAreRead() async throws {
        let server = try await PostgresServer.scoped()
        let client = try server.client(poolSize: 1)
        // 16 MiB of parameters: more than loopback's socket buffers take at once, so the worker writes the rest.
        let big = String(repeating: "x", count: 1 << 20)
        let queries = (0..<16).map { PostgresQuery("SELECT length($1::text), $2::int", [.text(big), .text(String($0))]) }
        let results = try await client.pipeline(queries)
        #expect(results.count == 16)
        #expect(results.map { $0.rows.first?.int(0) } == Array(repeating: 1 << 20, count: 16))
        #expect(results.map { $0.rows.first?.int(1) } == Array(0..<16))
        #expect(try await client.query("SELECT 'after'").rows.first?.string(0) == "after")
    }

    @Test func aPipelineNotAllWrittenAtItsDeadlineClosesTheSession() async throws {
        // A server that logs in (trust: AuthenticationOk, BackendKeyData, ReadyForQuery) and then reads nothing more.
        let login =
            ScriptedPostgresServer.message("R", ScriptedPostgresServer.int32(0))
            + ScriptedPostgresServer.message("K", ScriptedPostgresServer.int32(42) + ScriptedPostgresServer.int32(7))
            + ScriptedPostgresServer.message("Z", [UInt8(ascii: "I")])
        let server = try ScriptedPostgresServer(steps: [login], reading: false)
        defer { server.close() }
        let client = try PostgresClient(
            configuration: PostgresConfiguration(
                endpoints: [.init(host: "127.0.0.1", port: server.port)], user: "u", password: Secret("pw"), connectTimeout: 5,
                statementTimeout: 60, poolSize: 1))
        // 16 MiB the server never reads: the worker waits for EPOLLOUT until the deadline. Half a pipeline is out, so no
        // CancelRequest can help (the server waits for the rest): the session closes instead.
        let big = String(repeating: "x", count: 16 << 20)
        let error = await #expect(throws: PostgresError.self) {
            _ = try await client.pipeline([PostgresQuery("SELECT $1::text", [.text(big)])], timeout: 0.5)
        }
        #expect(error == .deadlineExceeded(cancelled: false))
        // Closed: no session (a process id of 0); the next statement would open a new one. (The server does not see the
        // close: the FIN waits behind the 16 MiB it never reads.)
        let pid = try await client.withConnection { (connection) async throws(PostgresError) in await connection.backendProcessID() }
        #expect(pid == 0)
    }

    @Test func aTaskRunningOnAWorkerGetsItsRowsThere() async throws {
        let server = try await PostgresServer.scoped()
        let client = try server.client(poolSize: 2)
        // Whichever worker a pooled connection belongs to, the task waits on each worker in turn and resumes there.
        for worker in HTTPEventLoops.shared.workers {
            for round in 0..<4 {
                let (value, onWorker) = try await withTaskExecutorPreference(worker) {
                    () async throws(PostgresError) -> (Int?, Bool) in
                    let rows = try await client.query("SELECT $1::int", [.text(String(round))])
                    return (rows.rows.first?.int(0), worker.isCurrent)
                }
                #expect(value == round)
                #expect(onWorker)
            }
        }
    }
}
