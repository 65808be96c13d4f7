import BrokerCore
import BrokerCrypto
import BrokerPostgres
import Foundation

/// One real PostgreSQL server shared by the tests running at the same time, each test in a database of its own.
///
/// `initdb` costs seconds; a database costs milliseconds. The server starts
/// with the first test that asks for one and stops when the last running one
/// ends (so a suite runs one server, and no server outlives the test process).
/// At most ``concurrentDatabases`` tests hold a database at once: more would
/// only share two cores and the server's connections.
public actor SharedPostgresServer {
    /// The server of this test process.
    public static let shared = SharedPostgresServer()
    /// How many tests hold a database at the same time; the others wait their turn.
    public static let concurrentDatabases = 6

    private var server: PostgresServer?
    private var starting: Task<PostgresServer, any Error>?
    private var users = 0
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// Runs `body` with the configuration (superuser, `poolSize` connections) of a new, empty database, dropped afterwards.
    public static func withDatabase<T: Sendable>(
        poolSize: Int = 2, _ body: (PostgresConfiguration) async throws -> T
    ) async throws -> T {
        let server = try await shared.acquire()
        let name = "t_" + Hex.encode(SecureRandom.bytes(8))
        let admin: PostgresClient
        do {
            admin = try server.client(poolSize: 1)
            _ = try await admin.query("CREATE DATABASE \(name)")
        } catch {
            await shared.release()
            throw error
        }
        var configuration = server.configuration(poolSize: poolSize)
        configuration.database = name
        let result: Result<T, any Error>
        do {
            result = .success(try await body(configuration))
        } catch {
            result = .failure(error)
        }
        // FORCE ends the sessions a test left open (PostgreSQL 13 or later).
        _ = try? await admin.query("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
        await admin.close()
        await shared.release()
        return try result.get()
    }

    /// Waits for a turn, then returns the running server, starting it if none runs.
    private func acquire() async throws -> PostgresServer {
        if users >= Self.concurrentDatabases {
            await withCheckedContinuation { waiters.append($0) }
        }
        users += 1
        do {
            if let server { return server }
            if let starting { return try await starting.value }
            // Room for every waiting test's clients: each opens a few pools of a few connections.
            let task = Task { try await PostgresServer.start(maxConnections: 200) }
            starting = task
            let started = try await task.value
            server = started
            starting = nil
            return started
        } catch {
            starting = nil
            await release()
            throw error
        }
    }

    /// Gives a turn back; the last user out stops the server.
    private func release() async {
        users -= 1
        if !waiters.isEmpty {
            waiters.removeFirst().resume()
        } else if users == 0, let server {
            self.server = nil
            await server.stop()
        }
    }
}
