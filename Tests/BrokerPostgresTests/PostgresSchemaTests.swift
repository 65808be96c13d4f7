import BrokerCore
import BrokerTestSupport
import Testing

@testable import BrokerPostgres

/// The schema's migrations on a real server: applied once whoever starts first, refused when the database is newer.
struct PostgresSchemaTests {
    /// Two replicas migrating an empty database at the same moment: one applies every version, the other none, and
    /// `schema_migrations` lists each version once.
    @Test func twoConcurrentMigratorsApplyOnce() async throws {
        try await SharedPostgresServer.withDatabase { configuration in
            let first = try PostgresClient(configuration: configuration)
            let second = try PostgresClient(configuration: configuration)
            async let a = PostgresSchema.migrate(first)
            async let b = PostgresSchema.migrate(second)
            let applied = try await [a, b]
            #expect(applied.sorted { $0.count < $1.count } == [[], PostgresSchema.migrations.map(\.version)])
            let rows = try await first.query("SELECT version FROM schema_migrations ORDER BY version")
            #expect(rows.rows.map { $0.int(0) } == PostgresSchema.migrations.map(\.version))
            #expect(try await PostgresSchema.currentVersion(first) == PostgresSchema.latestVersion)
            // A restart finds nothing to do.
            #expect(try await PostgresSchema.migrate(first) == [])
            await first.close()
            await second.close()
        }
    }

    /// A database a newer broker migrated stops this one with both versions named, and is left as it was.
    @Test func aNewerSchemaIsATypedError() async throws {
        try await SharedPostgresServer.withDatabase { configuration in
            let client = try PostgresClient(configuration: configuration)
            let newer =
                PostgresSchema.migrations + [
                    PostgresSchema.Migration(
                        version: PostgresSchema.latestVersion + 1, summary: "a later table", statements: ["CREATE TABLE later (id int)"])
                ]
            #expect(try await PostgresSchema.migrate(client, migrations: newer).count == newer.count)
            let error = await #expect(throws: PostgresSchemaError.self) { try await PostgresSchema.migrate(client) }
            #expect(error == .newerThanKnown(found: PostgresSchema.latestVersion + 1, known: PostgresSchema.latestVersion))
            #expect(error.map { "\($0)" }?.contains("version \(PostgresSchema.latestVersion + 1)") == true)
            #expect(try await PostgresSchema.currentVersion(client) == PostgresSchema.latestVersion + 1)
            await client.close()
        }
    }

    /// A migration whose statement fails leaves nothing behind: no table, no version row.
    @Test func aFailedMigrationLeavesNothing() async throws {
        try await SharedPostgresServer.withDatabase { configuration in
            let client = try PostgresClient(configuration: configuration)
            let broken = [
                PostgresSchema.Migration(
                    version: 1, summary: "broken", statements: ["CREATE TABLE half (id int)", "SELECT no_such_column"])
            ]
            await #expect(throws: PostgresSchemaError.self) { try await PostgresSchema.migrate(client, migrations: broken) }
            #expect(try await client.query("SELECT to_regclass('half') IS NULL").rows.first?.bool(0) == true)
            #expect(try await PostgresSchema.currentVersion(client) == 0)
            await client.close()
        }
    }
}
