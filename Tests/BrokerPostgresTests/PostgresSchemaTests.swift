import BrokerCore
import BrokerTestSupport
import Foundation
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

    /// Rows a version-1 broker wrote (no `counts_expired_at`) are filled by migration 2 from their records, sealed
    /// or plaintext, so the counts by status are right at once; later writes keep the column.
    @Test func accountsOfVersionOneAreCountedAfterMigrationTwo() async throws {
        try await SharedPostgresServer.withDatabase { configuration in
            let client = try PostgresClient(configuration: configuration)
            #expect(try await PostgresSchema.migrate(client, migrations: Array(PostgresSchema.migrations.prefix(1))) == [1])
            let keyring = try EncryptionKeyring.parse("k:" + String(repeating: "A", count: 43) + "=")
            let sealed = EncryptedAccountCodec(keyring: keyring)
            let past = Date().addingTimeInterval(-60)
            func old(_ account: Account, _ bytes: [UInt8]) async throws {
                // The version-1 statement: nine columns.
                _ = try await client.query(
                    """
                    INSERT INTO accounts (id, provider, uid, end_user, tags, status, expires_at, updated_at, record)
                    VALUES ($1, $2, $3, NULL, '{}', $4, $5, 0, $6::bytea)
                    """,
                    [
                        .text(account.id), .text(account.provider), .text(account.uid), .text(account.status.rawValue),
                        account.expiresAt.map { .int(Int($0.timeIntervalSince1970 * 1000)) } ?? .null, .bytea(bytes),
                    ])
            }
            var expiredSealed = Account.make(provider: "weibo", uid: "1")
            expiredSealed.expiresAt = past
            try await old(expiredSealed, try sealed.encode(expiredSealed))
            var expiredPlain = Account.make(provider: "weibo", uid: "2")
            expiredPlain.expiresAt = past
            try await old(expiredPlain, try PlainJSONAccountCodec().encode(expiredPlain))
            var refreshable = Account.make(provider: "weibo", uid: "3")
            refreshable.expiresAt = past
            refreshable.refreshToken = Secret("r")
            try await old(refreshable, try sealed.encode(refreshable))
            try await old(Account.make(provider: "weibo", uid: "4"), try sealed.encode(Account.make(provider: "weibo", uid: "4")))

            #expect(try await PostgresSchema.migrate(client) == [2, 3, 4])
            let repository = PostgresAccountRepository(client: client, codec: sealed)
            #expect(try await repository.statusCounts(at: Date()) == AccountStatusCounts(active: 2, expired: 2))
            // A write through this version keeps the column: the refreshable account loses its refresh token.
            refreshable.refreshToken = nil
            try await repository.put(refreshable)
            #expect(try await repository.statusCounts(at: Date()) == AccountStatusCounts(active: 1, expired: 3))
            #expect(try await repository.statusCounts(at: past.addingTimeInterval(-1)) == AccountStatusCounts(active: 4))
            await client.close()
        }
    }
}
