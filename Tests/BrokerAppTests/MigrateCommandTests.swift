import BrokerCore
import BrokerCrypto
import BrokerFileStore
import BrokerPostgres
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// `token-broker migrate --to postgres://…`: a file store the broker wrote is copied into a real PostgreSQL, a run
/// again copies nothing twice, an interrupted run is finished by the next, and a broker started on PostgreSQL
/// answers as the broker on the files did.
@Suite(.scoped) struct MigrateCommandTests {
    static let keyA = "a:" + Data((0..<32).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }).base64EncodedString()
    static let keyB = "b:" + Data((0..<32).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 5) }).base64EncodedString()
    static let secret = "migrate-cookie-secret-migrate-cookie-secret"
    static let api = [("Authorization", "Bearer " + BrokerHarness.apiKey)]

    /// A data directory as brokers of several versions left it: two records written in plaintext (before encryption
    /// at rest, sealed with key `a` when the next version opened them), two more sealed with that older key `a`, three
    /// with the current key `b`, tags and end users, and a pending delivery.
    static func writeFileStore(_ directory: String) async throws -> [Account] {
        var accounts: [Account] = []
        let now = Date()
        func account(_ i: Int) -> Account {
            var account = Account(
                provider: "weibo", uid: "u\(i)", accessToken: Secret("MIGRATE-TOKEN-\(i)"), tokenType: "bearer",
                refreshToken: i % 2 == 0 ? Secret("MIGRATE-REFRESH-\(i)") : nil, createdAt: now, updatedAt: now)
            account.tags = i % 3 == 0 ? ["team": "blue"] : [:]
            account.endUser = i % 2 == 1 ? EndUser(id: "user-\(i % 4)") : nil
            return account
        }
        let plain = try JSONFileAccountRepository(directory: directory, codec: PlainJSONAccountCodec())
        for i in 0..<2 {
            accounts.append(account(i))
            try await plain.put(accounts[i])
        }
        let old = try JSONFileAccountRepository(
            directory: directory, codec: EncryptedAccountCodec(keyring: try EncryptionKeyring.parse(keyA)))
        for i in 2..<4 {
            accounts.append(account(i))
            try await old.put(accounts[i])
        }
        let current = try JSONFileAccountRepository(
            directory: directory, codec: EncryptedAccountCodec(keyring: try EncryptionKeyring.parse(keyB + "," + keyA)))
        for i in 4..<7 {
            accounts.append(account(i))
            try await current.put(accounts[i])
        }
        try await current.compact()
        let outbox = try JournalWebhookOutbox(directory: directory, now: now)
        try await outbox.append([
            WebhookDelivery(
                id: "evt_0123456789abcdef.0", eventID: "evt_0123456789abcdef", eventType: "account.created",
                accountID: accounts[4].accountID,
                url: "https://hooks.example.com/in", body: "{\"type\":\"account.created\"}", enqueuedAt: now)
        ])
        return accounts
    }

    /// The environment of a broker (or a command) on the files of `directory`, or on PostgreSQL when `store` is given.
    static func environment(_ directory: String, store: String? = nil, passwordFile: String) -> [String: String] {
        var environment = [
            "BROKER_PORT": "0", "BROKER_DATA_DIR": directory, "BROKER_API_KEY": BrokerHarness.apiKey, "BROKER_LOG_FORMAT": "json",
            "BROKER_ENCRYPTION_KEY": keyB + "," + keyA, "BROKER_SECRET": secret, "BROKER_STORE_PASSWORD_FILE": passwordFile,
            "BROKER_REFRESH_INTERVAL": "0",
        ]
        if let store { environment["BROKER_STORE"] = store }
        return environment
    }

    /// Every page of `GET /accounts?limit=…` (the bodies as served) and `GET /account` for each id.
    static func answers(port: Int, ids: [String]) async throws -> [String] {
        var bodies: [String] = []
        var target = "/accounts?limit=3"
        while true {
            let reply = try #require(await TestHTTP.send(port: port, target: target, headers: api))
            #expect(reply.status == 200, "\(reply.body)")
            bodies.append(reply.body)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any])
            guard let next = json["next_cursor"] as? String else { break }
            target = "/accounts?limit=3&cursor=" + next
        }
        for id in ids {
            let reply = try #require(await TestHTTP.send(port: port, target: "/account?id=" + id, headers: api))
            bodies.append("\(reply.status) " + reply.body)
        }
        return bodies
    }

    @Test func aFileStoreMigratesAndTheBrokerOnPostgreSQLAnswersTheSame() async throws {
        try await SharedPostgresServer.withDatabase { pg in
            let root = try TemporaryDirectory.scoped(prefix: "broker-migrate")
            let directory = root + "/data"
            let accounts = try await Self.writeFileStore(directory)
            try (pg.password?.value ?? "").write(toFile: root + "/pw", atomically: false, encoding: .utf8)
            let url = "postgres://postgres@127.0.0.1:\(pg.endpoints[0].port)/\(pg.database)"
            let files = Self.environment(directory, passwordFile: root + "/pw")

            // What the broker on the files answers.
            let before = try await BrokerProcess.start(environment: files)
            let expected = try await Self.answers(port: before.port, ids: accounts.map(\.id))
            #expect(expected.contains { $0.contains("MIGRATE-TOKEN-2") })
            // migrate takes the data directory's lock: not under a serving broker.
            let refused = try await runBrokerCapturingOutput(["migrate", "--to", url], environment: files)
            #expect(refused.status == 1 && refused.stderr.contains("stop the broker"), "\(refused.stderr)")
            before.signal(SIGTERM)
            #expect(await before.waitForExit(timeout: 60) == 0)

            let first = try await runBrokerCapturingOutput(["migrate", "--to", url], environment: files)
            #expect(first.status == 0, "\(first.stderr)")
            #expect(first.stdout.contains("accounts: source 7, destination 7, copied by this run 7"), "\(first.stdout)")
            #expect(first.stdout.contains("webhook deliveries: source 1, destination 1, copied by this run 1"))
            #expect(
                !(first.stdout + first.stderr).contains("MIGRATE-TOKEN")
                    && !(first.stdout + first.stderr).contains(pg.password?.value ?? "-"))
            // Run again: nothing is copied twice.
            let second = try await runBrokerCapturingOutput(["migrate", "--to", url], environment: files)
            #expect(second.status == 0, "\(second.stderr)")
            #expect(second.stdout.contains("accounts: source 7, destination 7, copied by this run 0"), "\(second.stdout)")
            #expect(second.stdout.contains("webhook deliveries: source 1, destination 1, copied by this run 0"))

            // Sealed records kept their bytes: the four sealed with key a still are, and nothing is stored in plaintext.
            let client = try PostgresClient(configuration: pg)
            let rows = try await client.query("SELECT id, record FROM accounts ORDER BY id")
            await client.close()
            let keyIDs = rows.rows.map { row in String(decoding: row.bytea(1) ?? [], as: UTF8.self) }
            #expect(keyIDs.filter { $0.contains("\"kid\":\"a\"") }.count == 4)
            #expect(keyIDs.allSatisfy { $0.contains("chacha20-poly1305") && !$0.contains("MIGRATE-TOKEN") })

            let after = try await BrokerProcess.start(environment: Self.environment(directory, store: url, passwordFile: root + "/pw"))
            let answered = try await Self.answers(port: after.port, ids: accounts.map(\.id))
            #expect(answered == expected)
            after.signal(SIGTERM)
            #expect(await after.waitForExit(timeout: 60) == 0)
        }
    }

    /// A copy interrupted after its first batch (as a `kill` between two batches would) kept that batch; the next run
    /// copies the rest and no more, and the counts then match.
    @Test func anInterruptedMigrationIsFinishedByTheNextRun() async throws {
        try await SharedPostgresServer.withDatabase { pg in
            let root = try TemporaryDirectory.scoped(prefix: "broker-migrate")
            let directory = root + "/data"
            _ = try await Self.writeFileStore(directory)
            let c = try BrokerConfiguration.from(environment: [
                "BROKER_DATA_DIR": directory, "BROKER_ENCRYPTION_KEY": Self.keyB + "," + Self.keyA,
            ])
            let logger = BrokerLogger(format: .json, writer: LogWriter(fd: open("/dev/null", O_WRONLY)))
            struct Interrupted: Error {}
            // One row per statement, four statements per batch: the failure comes after 4 of 7 accounts.
            await #expect(throws: Interrupted.self) {
                _ = try await StorageBackendFactory.migrate(configuration: c, to: pg, logger: logger, rowsPerStatement: 1) { written in
                    if written >= 4 { throw Interrupted() }
                }
            }
            let client = try PostgresClient(configuration: pg)
            #expect(try await client.query("SELECT count(*) FROM accounts").rows.first?.int(0) == 4)
            await client.close()
            let finished = try await StorageBackendFactory.migrate(configuration: c, to: pg, logger: logger, rowsPerStatement: 1)
            #expect(finished.copiedAccounts == 3 && finished.sourceAccounts == 7 && finished.destinationAccounts == 7)
            #expect(finished.copiedDeliveries == 1 && finished.countsMatch)
            let again = try await StorageBackendFactory.migrate(configuration: c, to: pg, logger: logger)
            #expect(again.copiedAccounts == 0 && again.copiedDeliveries == 0 && again.countsMatch)
        }
    }

    /// Records of a version from before encryption at rest, never opened since, are sealed with the current key on
    /// the way (PostgreSQL has no rekey yet), and read back.
    @Test func plaintextRecordsAreSealedOnTheWay() async throws {
        try await SharedPostgresServer.withDatabase { pg in
            let directory = try TemporaryDirectory.scoped(prefix: "broker-migrate") + "/data"
            let plain = try JSONFileAccountRepository(directory: directory, codec: PlainJSONAccountCodec())
            for i in 0..<2 { try await plain.put(Account.make(provider: "weibo", uid: "p\(i)", accessToken: "PLAIN-TOKEN-\(i)")) }
            let c = try BrokerConfiguration.from(environment: ["BROKER_DATA_DIR": directory, "BROKER_ENCRYPTION_KEY": Self.keyB])
            let logger = BrokerLogger(format: .json, writer: LogWriter(fd: open("/dev/null", O_WRONLY)))
            let report = try await StorageBackendFactory.migrate(configuration: c, to: pg, logger: logger)
            #expect(report.sealedAccounts == 2 && report.copiedAccounts == 2 && report.countsMatch)
            #expect(report.text.contains("(2 plaintext records sealed with the current key)"))
            let client = try PostgresClient(configuration: pg)
            let records = try await client.query("SELECT record FROM accounts").rows.map {
                String(decoding: $0.bytea(0) ?? [], as: UTF8.self)
            }
            #expect(records.count == 2 && records.allSatisfy { !$0.contains("PLAIN-TOKEN") })
            let repository = PostgresAccountRepository(
                client: client, codec: EncryptedAccountCodec(keyring: try EncryptionKeyring.parse(Self.keyB)))
            #expect(try await repository.get(id: AccountID(provider: "weibo", uid: "p1"))?.accessToken.value == "PLAIN-TOKEN-1")
            await client.close()
        }
    }

    /// An account changed on PostgreSQL after the copy is not overwritten by a run again; an extra row there makes
    /// the counts differ, which is exit 1 with both counts printed.
    @Test func aRunAgainKeepsNewerRowsAndReportsCountsThatDiffer() async throws {
        try await SharedPostgresServer.withDatabase { pg in
            let root = try TemporaryDirectory.scoped(prefix: "broker-migrate")
            let directory = root + "/data"
            let accounts = try await Self.writeFileStore(directory)
            try (pg.password?.value ?? "").write(toFile: root + "/pw", atomically: false, encoding: .utf8)
            let url = "postgres://postgres@127.0.0.1:\(pg.endpoints[0].port)/\(pg.database)"
            let files = Self.environment(directory, passwordFile: root + "/pw")
            #expect(try await runBrokerCapturingOutput(["migrate", "--to", url], environment: files).status == 0)

            let client = try PostgresClient(configuration: pg)
            let codec = EncryptedAccountCodec(keyring: try EncryptionKeyring.parse(Self.keyB + "," + Self.keyA))
            let repository = PostgresAccountRepository(client: client, codec: codec)
            var changed = accounts[5]
            changed.accessToken = Secret("CHANGED-ON-POSTGRES")
            changed.updatedAt = Date().addingTimeInterval(60)
            try await repository.put(changed)
            try await repository.put(Account.make(provider: "weibo", uid: "only-in-postgres"))

            let again = try await runBrokerCapturingOutput(["migrate", "--to", url], environment: files)
            #expect(again.status == 1)
            #expect(again.stderr.contains("accounts: source 7, destination 8, copied by this run 0"), "\(again.stderr)")
            #expect(try await repository.get(id: changed.accountID)?.accessToken.value == "CHANGED-ON-POSTGRES")
            await client.close()

            let bad = try await runBrokerCapturingOutput(["migrate", "--to", "redis://127.0.0.1:1"], environment: files)
            #expect(bad.status == 2 && bad.stderr.contains("--to"))
            let missing = try await runBrokerCapturingOutput(["migrate"], environment: files)
            #expect(missing.status == 2)
        }
    }

    /// A broker on Redis (which settled its key there) leaves accounts and a webhook delivery; `migrate` with
    /// `BROKER_STORE=redis://…` copies them, and they read back on PostgreSQL with the same key.
    @Test func redisMigratesToo() async throws {
        try await RedisServer.with { redis in
            try await SharedPostgresServer.withDatabase { pg in
                let root = try TemporaryDirectory.scoped(prefix: "broker-migrate-redis")
                let environment = [
                    "BROKER_PORT": "0", "BROKER_DATA_DIR": root + "/data", "BROKER_STORE": "redis://127.0.0.1:\(redis.port)/0",
                    "BROKER_ENCRYPTION_KEY": Self.keyB, "BROKER_SECRET": Self.secret, "BROKER_API_KEY": BrokerHarness.apiKey,
                ]
                let c = try BrokerConfiguration.from(environment: environment)
                let logger = BrokerLogger(format: .json, writer: LogWriter(fd: open("/dev/null", O_WRONLY)))
                let broker = try await Broker.make(configuration: c, logger: logger)
                for i in 0..<5 {
                    try await broker.storage.accounts.put(Account.make(provider: "weibo", uid: "r\(i)", accessToken: "REDIS-TOKEN-\(i)"))
                }
                await broker.shutdown()

                let report = try await StorageBackendFactory.migrate(configuration: c, to: pg, logger: logger)
                #expect(report.sourceAccounts == 5 && report.copiedAccounts == 5 && report.countsMatch, "\(report)")
                let again = try await StorageBackendFactory.migrate(configuration: c, to: pg, logger: logger)
                #expect(again.copiedAccounts == 0 && again.countsMatch)
                let client = try PostgresClient(configuration: pg)
                let repository = PostgresAccountRepository(
                    client: client, codec: EncryptedAccountCodec(keyring: try EncryptionKeyring.parse(Self.keyB)))
                #expect(try await repository.get(id: AccountID(provider: "weibo", uid: "r3"))?.accessToken.value == "REDIS-TOKEN-3")
                await client.close()
            }
        }
    }
}
