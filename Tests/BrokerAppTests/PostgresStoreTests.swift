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
        // Replicas must seal and sign alike: both must be given.
        let noKey = #expect(throws: ConfigurationError.self) {
            try BrokerConfiguration.from(environment: ["BROKER_STORE": "postgres://u@h/db", "BROKER_SECRET": Self.secret])
        }
        #expect(noKey?.variable == "BROKER_ENCRYPTION_KEY")
        let noSecret = #expect(throws: ConfigurationError.self) {
            try BrokerConfiguration.from(environment: ["BROKER_STORE": "postgres://u@h/db", "BROKER_ENCRYPTION_KEY": Self.encryptionKey])
        }
        #expect(noSecret?.variable == "BROKER_SECRET")
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
}
