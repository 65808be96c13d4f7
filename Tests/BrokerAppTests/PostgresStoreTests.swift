import BrokerCore
import BrokerPostgres
import BrokerTestSupport
import Foundation
import Glibc
import Testing

@testable import BrokerApp

/// `BROKER_STORE=postgres://…`: read from the environment, and a broker built on a real server.
@Suite(.scoped) struct PostgresStoreTests {
    static let encryptionKey = "k1:" + Data((0..<32).map { UInt8($0 &* 5 &+ 1) }).base64EncodedString()
    static let secret = "shared-cookie-secret-shared-cookie-secret"

    @Test func theURLThePasswordFileAndMD5AreRead() throws {
        let root = try TemporaryDirectory.scoped(prefix: "broker-pg-config")
        try "file-pass\n".write(toFile: root + "/pw", atomically: false, encoding: .utf8)
        let c = try BrokerConfiguration.from(environment: [
            "BROKER_STORE": "postgresql://broker@db1:5432,db2:5433/tokens?target_session_attrs=read-write",
            "BROKER_STORE_PASSWORD_FILE": root + "/pw", "BROKER_POSTGRES_ALLOW_MD5": "1",
            "BROKER_ENCRYPTION_KEY": Self.encryptionKey, "BROKER_SECRET": Self.secret,
        ])
        let store = try #require(c.postgresStore)
        #expect(store.password?.value == "file-pass" && store.allowMD5 && store.database == "tokens")
        #expect(store.endpoints.map(\.port) == [5432, 5433])
        #expect(c.redisStore == nil)
        // What is logged names the hosts and the database, never the password.
        #expect(c.storeDescription == "postgres://db1:5432,db2:5433/tokens")
    }

    @Test func badSettingsNameTheirVariable() throws {
        let base = ["BROKER_ENCRYPTION_KEY": Self.encryptionKey, "BROKER_SECRET": Self.secret]
        let cases: [([String: String], String)] = [
            (["BROKER_STORE": "postgres://u:p@h/db?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem"], "BROKER_STORE"),
            (["BROKER_STORE": "postgres://u:p@h/db?sslmode=verify-full&sslkey=/k.pem"], "BROKER_STORE"),
            (["BROKER_STORE": "postgres://u:p@h/db?bogus=1"], "BROKER_STORE"),
            (["BROKER_STORE": "postgres://u:p@h/db", "BROKER_STORE_PASSWORD_FILE": "/nonexistent/pw"], "BROKER_STORE_PASSWORD_FILE"),
            (["BROKER_STORE": "postgres://u:p@h/db", "BROKER_POSTGRES_ALLOW_MD5": "maybe"], "BROKER_POSTGRES_ALLOW_MD5"),
        ]
        for (environment, variable) in cases {
            let error = #expect(throws: ConfigurationError.self) {
                try BrokerConfiguration.from(environment: base.merging(environment) { $1 })
            }
            #expect(error?.variable == variable, "\(environment)")
            #expect(error?.description.contains(":p@") != true)
        }
        // Neither the key nor the secret is required: unset, they are generated once into the database.
        let bare = try BrokerConfiguration.from(environment: ["BROKER_STORE": "postgres://u@h/db"])
        #expect(bare.encryptionKeyring == nil && bare.secret == nil && bare.postgresStore != nil)
    }

    /// The configuration of a broker on `pg` with the data directory `dataDirectory`, without a key or secret.
    static func unkeyed(_ pg: PostgresConfiguration, dataDirectory: String, extra: [String: String] = [:]) throws -> BrokerConfiguration {
        let url = "postgres://postgres:\(pg.password?.value ?? "")@127.0.0.1:\(pg.endpoints[0].port)/\(pg.database)"
        return try BrokerConfiguration.from(
            environment: [
                "BROKER_PORT": "0", "BROKER_DATA_DIR": dataDirectory, "BROKER_STORE": url, "BROKER_API_KEY": BrokerHarness.apiKey,
            ]
            .merging(extra) { $1 })
    }

    /// Two replicas started together on a fresh database without BROKER_ENCRYPTION_KEY or BROKER_SECRET: their
    /// start-up code races to generate both, and they come out with one key and one secret, the ones stored in
    /// `broker_settings`; what one seals the other opens.
    @Test func replicasStartingTogetherAgreeOnOneGeneratedKeyAndSecret() async throws {
        try await SharedPostgresServer.withDatabase(poolSize: 4) { pg in
            let root = try TemporaryDirectory.scoped(prefix: "broker-pg-agree")
            let logger = BrokerLogger(format: .json, writer: LogWriter(fd: open("/dev/null", O_WRONLY)))
            let configurations = try (0..<4).map { try Self.unkeyed(pg, dataDirectory: root + "/replica-\($0)") }
            let openings = try await withThrowingTaskGroup(of: PostgresOpening.self) { group in
                for c in configurations {
                    group.addTask { try #require(try await StorageBackendFactory.openPostgres(c, logger: logger, now: { Date() })) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(openings.count == 4)
            #expect(Set(openings.map(\.keyring.ids)).count == 1)
            #expect(Set(openings.map(\.cookieSecret)).count == 1)
            #expect(openings[0].cookieSecret.count == 32)
            let client = try PostgresClient(configuration: pg)
            let rows = try await client.query("SELECT name, value FROM broker_settings ORDER BY name")
            #expect(rows.rows.compactMap { $0.string(0) } == [PostgresSettings.generatedSecretName, PostgresSettings.generatedKeyName])
            #expect(rows.rows[0].bytea(1) == openings[0].cookieSecret)
            // A record sealed by one replica opens in another, and no data directory got a key file.
            let account = Account.make(uid: "agreed-1")
            try await openings[0].backend.accounts.put(account)
            #expect(try await openings[3].backend.accountRepository.get(id: account.accountID) == account)
            #expect(!FileManager.default.fileExists(atPath: root + "/replica-0/" + EncryptionKeyring.keyFileName))
            await client.close()
            for opening in openings { opening.backend.stop() }
        }
    }

    /// A stored key is kept: a replica whose data directory holds an older generated key starts with the store's
    /// (a newer keyring, as after a rotation) and never writes its own over it. A given key is never stored. A store
    /// holding accounts but no generated key refuses to generate one (exit 2, naming the variable).
    @Test func aStoredKeyIsKeptAndAStoreWithAccountsRefusesANewOne() async throws {
        try await SharedPostgresServer.withDatabase { pg in
            let root = try TemporaryDirectory.scoped(prefix: "broker-pg-keep")
            let logger = BrokerLogger(format: .json, writer: LogWriter(fd: open("/dev/null", O_WRONLY)))
            let client = try PostgresClient(configuration: pg)
            _ = try await PostgresSchema.migrate(client)
            // Given a key, a replica stores nothing; its account makes the store one with sealed records.
            let given = try Self.unkeyed(
                pg, dataDirectory: root + "/given", extra: ["BROKER_ENCRYPTION_KEY": Self.encryptionKey, "BROKER_SECRET": Self.secret])
            let first = try #require(try await StorageBackendFactory.openPostgres(given, logger: logger, now: { Date() }))
            #expect(first.keyring.ids == ["k1"] && first.cookieSecret == Array(Self.secret.utf8))
            try await first.backend.accounts.put(Account.make(uid: "given-1"))
            first.backend.stop()
            #expect(try await client.query("SELECT count(*) FROM broker_settings").rows.first?.int(0) == 0)
            let error = await #expect(throws: ConfigurationError.self) {
                _ = try await StorageBackendFactory.openPostgres(
                    try Self.unkeyed(pg, dataDirectory: root + "/bare"), logger: logger, now: { Date() })
            }
            #expect(error?.variable == "BROKER_ENCRYPTION_KEY")
            #expect(
                try await client.query("SELECT count(*) FROM broker_settings WHERE name = $1", [.text(PostgresSettings.generatedKeyName)])
                    .rows.first?.int(0) == 0)

            // The stored keyring: a newer key first, the older one after it.
            let newer = "k2:" + Data((0..<32).map { UInt8($0 &* 3 &+ 9) }).base64EncodedString()
            let stored = newer + "," + Self.encryptionKey
            _ = try await client.query(
                "INSERT INTO broker_settings (name, value) VALUES ($1, $2::bytea)",
                [.text(PostgresSettings.generatedKeyName), .bytea(Array(stored.utf8))])
            // This replica's data directory holds only the older key, as the file store generated it.
            try FileManager.default.createDirectory(atPath: root + "/old", withIntermediateDirectories: true)
            try Self.encryptionKey.write(toFile: root + "/old/" + EncryptionKeyring.keyFileName, atomically: false, encoding: .utf8)
            let second = try #require(
                try await StorageBackendFactory.openPostgres(
                    try Self.unkeyed(pg, dataDirectory: root + "/old"), logger: logger, now: { Date() }))
            #expect(second.keyring.ids == ["k2", "k1"])
            #expect(try await second.backend.accountRepository.list(provider: nil).map(\.uid) == ["given-1"])
            second.backend.stop()
            let kept = try await PostgresSettings(client: client).value(PostgresSettings.generatedKeyName)
            #expect(kept == Array(stored.utf8))
            await client.close()
        }
    }

    /// A broker on a fresh database migrates it and stores accounts there; a database a newer broker migrated stops
    /// start-up with a configuration error (exit 2) naming both versions.
    @Test func aBrokerMigratesItsDatabaseAndRefusesANewerOne() async throws {
        try await SharedPostgresServer.withDatabase { pg in
            let root = try TemporaryDirectory.scoped(prefix: "broker-pg")
            let url = "postgres://postgres@127.0.0.1:\(pg.endpoints[0].port)/\(pg.database)"
            try (pg.password?.value ?? "").write(toFile: root + "/pw", atomically: false, encoding: .utf8)
            let configuration = try BrokerConfiguration.from(environment: [
                "BROKER_PORT": "0", "BROKER_DATA_DIR": root + "/data", "BROKER_STORE": url, "BROKER_STORE_PASSWORD_FILE": root + "/pw",
                "BROKER_API_KEY": BrokerHarness.apiKey, "BROKER_ENCRYPTION_KEY": Self.encryptionKey, "BROKER_SECRET": Self.secret,
            ])
            let logger = BrokerLogger(
                format: .json, writer: LogWriter(fd: open(root + "/broker.log", O_CREAT | O_WRONLY | O_APPEND, 0o600)))
            let broker = try await Broker.make(configuration: configuration, logger: logger)
            #expect(broker.storage is PostgresStorageBackend)
            let account = Account.make(uid: "pg-1")
            try await broker.storage.accounts.put(account)
            #expect(try await broker.storage.accounts.get(id: account.accountID) == account)
            await broker.shutdown()

            let client = try PostgresClient(configuration: pg)
            let later = PostgresSchema.latestVersion + 1
            _ = try await client.query("INSERT INTO schema_migrations (version) VALUES ($1)", [.int(later)])
            await client.close()
            let error = await #expect(throws: ConfigurationError.self) {
                _ = try await Broker.make(configuration: configuration, logger: logger)
            }
            #expect(error?.variable == "BROKER_STORE")
            #expect(error?.description.contains("version \(later)") == true)
            #expect(error?.description.contains("(\(PostgresSchema.latestVersion))") == true)
        }
    }

    /// `/readyz` follows the primary: 503 `postgres_unreachable` while the server is down, 200 again once it is back,
    /// without a broker restart. `/metrics` shows the pool, the round trips, the errors of the outage by kind, and
    /// `broker_accounts{status}` counted by PostgreSQL.
    @Test func readinessFollowsThePrimaryAndMetricsShowThePool() async throws {
        let server = try await PostgresServer.scoped()
        let root = try TemporaryDirectory.scoped(prefix: "broker-pg-ops")
        try server.superuserPassword.write(toFile: root + "/pw", atomically: false, encoding: .utf8)
        let environment = [
            "BROKER_PORT": "0", "BROKER_DATA_DIR": root + "/data", "BROKER_API_KEY": BrokerHarness.apiKey, "BROKER_LOG_FORMAT": "json",
            "BROKER_STORE": "postgres://postgres@127.0.0.1:\(server.port)/postgres?connect_timeout=2",
            "BROKER_STORE_PASSWORD_FILE": root + "/pw", "BROKER_ENCRYPTION_KEY": Self.encryptionKey, "BROKER_SECRET": Self.secret,
        ]
        // Accounts in each status, written as a broker writes them: two active, one past expiry with nothing to refresh
        // it with, one with a refresh token past expiry (counts as active), one whose refresh was refused.
        let client = try server.client(poolSize: 1)
        try await PostgresSchema.migrate(client)
        let codec = EncryptedAccountCodec(keyring: try EncryptionKeyring.parse(Self.encryptionKey))
        let repository = PostgresAccountRepository(client: client, codec: codec)
        let past = Date().addingTimeInterval(-3600)
        try await repository.put(Account.make(provider: "weibo", uid: "a1"))
        try await repository.put(Account.make(provider: "weibo", uid: "a2"))
        var expired = Account.make(provider: "weibo", uid: "e1")
        expired.expiresAt = past
        try await repository.put(expired)
        var refreshable = Account.make(provider: "weibo", uid: "r1")
        refreshable.expiresAt = past
        refreshable.refreshToken = Secret("refresh")
        try await repository.put(refreshable)
        var refused = Account.make(provider: "weibo", uid: "x1")
        refused.status = .reauthorizationRequired
        try await repository.put(refused)
        await client.close()

        let broker = try await BrokerProcess.start(environment: environment)
        func get(_ target: String) async -> TestHTTP.Reply? {
            await TestHTTP.send(port: broker.port, target: target, headers: [("Authorization", "Bearer " + BrokerHarness.apiKey)])
        }
        #expect(await get("/readyz")?.status == 200)
        let metrics = try #require(await get("/metrics")).body
        for line in [
            "broker_accounts{status=\"active\"} 3", "broker_accounts{status=\"expired\"} 1",
            "broker_accounts{status=\"reauthorization_required\"} 1", "broker_accounts{status=\"refresh_exhausted\"} 0",
            "broker_postgres_pool_connections{state=\"in_use\"}", "broker_postgres_pool_connections{state=\"idle\"}",
            "broker_postgres_errors_total{kind=\"connection_lost\"} 0", "# TYPE broker_postgres_round_trip_seconds histogram",
        ] {
            #expect(metrics.contains(line), "\(line)")
        }
        #expect(!metrics.contains("broker_postgres_round_trip_seconds_count 0\n"))

        await server.kill()
        // Readiness says which store is down; the broker stays alive (liveness does not depend on storage).
        #expect(await eventually { await get("/readyz").map { $0.status == 503 && $0.body.contains("postgres_unreachable") } ?? false })
        #expect(await get("/healthz")?.status == 200)
        let down = try #require(await get("/metrics")).body
        let errors = down.split(separator: "\n").filter { $0.hasPrefix("broker_postgres_errors_total{") }
        #expect(errors.contains { !$0.hasSuffix(" 0") }, "\(errors)")

        try await server.restart()
        #expect(await eventually { await get("/readyz")?.status == 200 })
        #expect(await get("/account?id=weibo:a1")?.status == 200)
        broker.signal(SIGTERM)
        #expect(await broker.waitForExit(timeout: 60) == 0)
    }

    /// A broker on PostgreSQL serves `GET /account` from its replica cache, and a change written by another replica
    /// (here a repository on its own client, writing as a broker does) reaches it through `NOTIFY`.
    @Test func aBrokerServesFromItsCacheAndHearsOtherReplicasWrites() async throws {
        try await SharedPostgresServer.withDatabase { pg in
            let root = try TemporaryDirectory.scoped(prefix: "broker-pg-cache")
            try (pg.password?.value ?? "").write(toFile: root + "/pw", atomically: false, encoding: .utf8)
            let client = try PostgresClient(configuration: pg)
            try await PostgresSchema.migrate(client)
            let other = PostgresAccountRepository(
                client: client, codec: EncryptedAccountCodec(keyring: try EncryptionKeyring.parse(Self.encryptionKey)))
            let account = Account.make(provider: "weibo", uid: "c1", accessToken: "CACHED-FIRST")
            try await other.put(account)
            let broker = try await BrokerProcess.start(environment: [
                "BROKER_PORT": "0", "BROKER_DATA_DIR": root + "/data", "BROKER_API_KEY": BrokerHarness.apiKey,
                "BROKER_LOG_FORMAT": "json", "BROKER_STORE": "postgres://postgres@127.0.0.1:\(pg.endpoints[0].port)/\(pg.database)",
                "BROKER_STORE_PASSWORD_FILE": root + "/pw", "BROKER_ENCRYPTION_KEY": Self.encryptionKey, "BROKER_SECRET": Self.secret,
            ])
            func token() async -> String? {
                await TestHTTP.send(
                    port: broker.port, target: "/account?id=weibo:c1", headers: [("Authorization", "Bearer " + BrokerHarness.apiKey)]
                )
                .flatMap { reply in reply.status == 200 ? reply.body : nil }
            }
            func metric(_ name: String) async -> Int? {
                guard let body = await TestHTTP.send(port: broker.port, target: "/metrics")?.body else { return nil }
                return body.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Int($0.split(separator: " ")[1]) }
            }
            #expect(await eventually { await metric("broker_postgres_listen_up") == 1 })
            #expect(await token()?.contains("CACHED-FIRST") == true)
            // Read again until a read is answered from memory.
            #expect(
                await eventually {
                    _ = await token(); return (await metric("broker_postgres_cache_hits_total") ?? 0) > 0
                })
            var changed = account
            changed.accessToken = Secret("CACHED-SECOND")
            try await other.put(changed)
            #expect(await eventually { await token()?.contains("CACHED-SECOND") == true })
            #expect((await metric("broker_postgres_cache_invalidations_total") ?? 0) > 0)
            broker.signal(SIGTERM)
            #expect(await broker.waitForExit(timeout: 60) == 0)
            await client.close()
        }
    }
}
