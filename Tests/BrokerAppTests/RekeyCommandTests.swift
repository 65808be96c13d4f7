import BrokerCore
import BrokerCrypto
import BrokerFileStore
import BrokerPostgres
import BrokerTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `token-broker rekey` re-encrypts stored accounts with the current key, so an old key can be dropped.
@Suite(.scoped) struct RekeyCommandTests {
    @Test func rekeyMovesEveryRecordToTheCurrentKey() async throws {
        let dir = try TemporaryDirectory.scoped(prefix: "broker-rekey")
        let keyA = "a:" + Base64.encode(SecureRandom.bytes(32))
        let keyB = "b:" + Base64.encode(SecureRandom.bytes(32))
        let old = try EncryptionKeyring.parse(keyA)
        let repository = try JSONFileAccountRepository(directory: dir, codec: EncryptedAccountCodec(keyring: old))
        let now = Date()
        for i in 0..<5 {
            try await repository.put(
                Account(
                    provider: "weibo", uid: "\(i)", accessToken: Secret("REKEY-TOKEN-SENTINEL-\(i)"),
                    createdAt: now, updatedAt: now))
        }
        // The new key alone cannot open the old records: start-up refuses rather than guessing.
        let (refused, refusal) = try await runBroker(["rekey"], environment: ["BROKER_DATA_DIR": dir, "BROKER_ENCRYPTION_KEY": keyB])
        #expect(refused == 1)
        #expect(refusal.contains(dir + "/accounts.journal.1.jsonl line 1"))

        let (status, log) = try await runBroker(
            ["rekey"], environment: ["BROKER_DATA_DIR": dir, "BROKER_ENCRYPTION_KEY": keyB + "," + keyA])
        #expect(status == 0)
        #expect(log.contains("rewritten=5") && log.contains("total=5"))
        #expect(!log.contains("REKEY-TOKEN-SENTINEL"))

        let current = try JSONFileAccountRepository(
            directory: dir, codec: EncryptedAccountCodec(keyring: try EncryptionKeyring.parse(keyB)))
        #expect(try await current.get(id: "weibo:3")?.accessToken.value == "REKEY-TOKEN-SENTINEL-3")

        let (again, second) = try await runBroker(["rekey"], environment: ["BROKER_DATA_DIR": dir, "BROKER_ENCRYPTION_KEY": keyB])
        #expect(again == 0)
        #expect(second.contains("rewritten=0"))
    }

    @Test func rekeyOnPostgreSQLMovesEveryRecordToTheCurrentKey() async throws {
        try await SharedPostgresServer.withDatabase { pg in
            let root = try TemporaryDirectory.scoped(prefix: "broker-rekey-pg")
            try (pg.password?.value ?? "").write(toFile: root + "/pw", atomically: false, encoding: .utf8)
            let keyA = "a:" + Base64.encode(SecureRandom.bytes(32))
            let keyB = "b:" + Base64.encode(SecureRandom.bytes(32))
            let client = try PostgresClient(configuration: pg)
            _ = try await PostgresSchema.migrate(client)
            let old = PostgresAccountRepository(client: client, codec: EncryptedAccountCodec(keyring: try EncryptionKeyring.parse(keyA)))
            let now = Date()
            for i in 0..<5 {
                try await old.put(
                    Account(
                        provider: "weibo", uid: "\(i)", accessToken: Secret("REKEY-TOKEN-SENTINEL-\(i)"), createdAt: now, updatedAt: now))
            }
            let environment = [
                "BROKER_DATA_DIR": root + "/data", "BROKER_STORE": "postgres://postgres@127.0.0.1:\(pg.endpoints[0].port)/\(pg.database)",
                "BROKER_STORE_PASSWORD_FILE": root + "/pw", "BROKER_SECRET": "rekey-secret-0123456789-0123456789-0123",
            ]
            var current = environment
            current["BROKER_ENCRYPTION_KEY"] = keyB + "," + keyA
            let (status, log) = try await runBroker(["rekey"], environment: current)
            #expect(status == 0)
            #expect(log.contains("rewritten=5") && log.contains("total=5"))
            #expect(!log.contains("REKEY-TOKEN-SENTINEL"))
            // Key A can go now: every record opens with key B alone, and a second run rewrites nothing.
            let onlyB = PostgresAccountRepository(client: client, codec: EncryptedAccountCodec(keyring: try EncryptionKeyring.parse(keyB)))
            #expect(try await onlyB.get(id: AccountID(provider: "weibo", uid: "3"))?.accessToken.value == "REKEY-TOKEN-SENTINEL-3")
            current["BROKER_ENCRYPTION_KEY"] = keyB
            let (again, second) = try await runBroker(["rekey"], environment: current)
            #expect(again == 0)
            #expect(second.contains("rewritten=0"))
            await client.close()
        }
    }

    /// Every row of the tables that hold sealed records, and of `broker_settings` and `schema_migrations`: to prove a
    /// dry run changed nothing.
    static func postgresSnapshot(_ client: PostgresClient) async throws -> [String] {
        var rows: [String] = []
        for (table, key) in [
            ("accounts", "id"), ("flows", "state"), ("app_tokens", "key"), ("client_registrations", "key"),
            ("broker_settings", "name"), ("schema_migrations", "version"),
        ] {
            let result = try await client.query("SELECT \(key)::text, md5(row(t.*)::text) FROM \(table) t ORDER BY \(key)")
            rows += result.rows.map { "\(table) \($0.string(0) ?? "") \($0.string(1) ?? "")" }
        }
        return rows
    }

    /// Accounts, a pending flow, an app token and a client registration sealed with key A, one account with key B:
    /// `rekey --dry-run` with B,A counts what `rekey` would re-seal of each kind and changes no row; `rekey` then
    /// re-seals every kind, and each reads with key B alone.
    @Test func rekeyOnPostgreSQLCoversEverySealedRecordAndItsDryRunChangesNothing() async throws {
        try await SharedPostgresServer.withDatabase { pg in
            let root = try TemporaryDirectory.scoped(prefix: "broker-rekey-pg-all")
            try (pg.password?.value ?? "").write(toFile: root + "/pw", atomically: false, encoding: .utf8)
            let keyA = "a:" + Base64.encode(SecureRandom.bytes(32))
            let keyB = "b:" + Base64.encode(SecureRandom.bytes(32))
            let client = try PostgresClient(configuration: pg)
            _ = try await PostgresSchema.migrate(client)
            let codecA = EncryptedAccountCodec(keyring: try EncryptionKeyring.parse(keyA))
            let codecB = EncryptedAccountCodec(keyring: try EncryptionKeyring.parse(keyB))
            let old = PostgresStorageBackend(client: client, codec: codecA, flowSealer: codecA)
            let now = Date()
            for i in 0..<3 {
                try await old.accountRepository.put(
                    Account(
                        provider: "weibo", uid: "\(i)", accessToken: Secret("REKEY-TOKEN-SENTINEL-\(i)"), createdAt: now, updatedAt: now))
            }
            try await PostgresAccountRepository(client: client, codec: codecB).put(
                Account(provider: "weibo", uid: "9", accessToken: Secret("REKEY-TOKEN-SENTINEL-9"), createdAt: now, updatedAt: now))
            let flow = PendingFlow(
                state: PendingFlow.randomState(), provider: "twitter", binding: "api-caller-7",
                requestToken: "request-token", requestTokenSecret: Secret("REKEY-FLOW-SENTINEL"),
                returnTo: nil, createdAt: now, expiresAt: now.addingTimeInterval(900))
            try await old.flowStore.put(flow)
            let token = AppToken(
                provider: "graph", requestedScope: "a b", accessToken: Secret("REKEY-APP-SENTINEL"), tokenType: "Bearer",
                scope: nil, issuedAt: now, expiresAt: now.addingTimeInterval(600))
            try await old.appTokenStore.store(token, keepUntil: now.addingTimeInterval(600), at: now)
            let registration = ClientRegistration(
                server: "https://mcp.example.com/mcp", issuer: "https://auth.example.com",
                redirectURI: "https://broker.example.com/callback",
                clientID: "abc", clientSecret: Secret("REKEY-CLIENT-SENTINEL"), authentication: .clientSecretBasic,
                registeredAt: Date(timeIntervalSince1970: 1_800_000_000.25))
            _ = try await old.registrationStore.add(registration)
            let environment = [
                "BROKER_DATA_DIR": root + "/data", "BROKER_STORE": "postgres://postgres@127.0.0.1:\(pg.endpoints[0].port)/\(pg.database)",
                "BROKER_STORE_PASSWORD_FILE": root + "/pw", "BROKER_ENCRYPTION_KEY": keyB + "," + keyA,
            ]

            let before = try await Self.postgresSnapshot(client)
            let dry = try await runBrokerCapturingOutput(["rekey", "--dry-run"], environment: environment)
            #expect(dry.status == 0, "\(dry.stderr)")
            let lines = dry.stdout.split(separator: "\n").map(String.init)
            #expect(lines.first == "rekey --dry-run: 3 of 4 accounts would be re-sealed with key \"b\". Nothing was changed.")
            #expect(lines.contains("  pending flows: 1 of 1 would be re-sealed"))
            #expect(lines.contains("  app tokens: 1 of 1 would be re-sealed"))
            #expect(lines.contains("  client registrations: 1 of 1 would be re-sealed"))
            #expect(lines.filter { $0.contains("sealed with key \"a\"") }.count == 3)
            #expect(!(dry.stdout + dry.stderr).contains("SENTINEL"))
            // No row moved, no key or secret was generated, no migration recorded, and no data directory made.
            #expect(try await Self.postgresSnapshot(client) == before)
            #expect(!FileManager.default.fileExists(atPath: root + "/data"))

            let (status, log) = try await runBroker(
                ["rekey"], environment: environment.merging(["BROKER_SECRET": "rekey-secret-0123456789-0123456789"]) { $1 })
            #expect(status == 0, "\(log)")
            #expect(!log.contains("SENTINEL"))
            // Key A can go: every kind opens with key B alone.
            let onlyB = PostgresStorageBackend(client: client, codec: codecB, flowSealer: codecB)
            for i in [0, 1, 2, 9] {
                #expect(
                    try await onlyB.accountRepository.get(id: AccountID(provider: "weibo", uid: "\(i)"))?.accessToken.value
                        == "REKEY-TOKEN-SENTINEL-\(i)")
            }
            #expect(try await onlyB.appTokenStore.token(for: token.key)?.accessToken.value == "REKEY-APP-SENTINEL")
            #expect(try await onlyB.registrationStore.registration(for: registration.key)?.clientSecret?.value == "REKEY-CLIENT-SENTINEL")
            #expect(try await onlyB.flowStore.take(state: flow.state, now: now)?.requestTokenSecret?.value == "REKEY-FLOW-SENTINEL")
            // A second dry run with key B alone finds nothing left.
            let after = try await runBrokerCapturingOutput(
                ["rekey", "--dry-run"], environment: environment.merging(["BROKER_ENCRYPTION_KEY": keyB]) { $1 })
            #expect(
                after.stdout.hasPrefix("rekey --dry-run: all 4 accounts are sealed with key \"b\"; nothing to re-seal."),
                "\(after.stdout)\(after.stderr)")
            await client.close()
        }
    }

    @Test func aBadKeyIsAConfigurationError() async throws {
        let dir = try TemporaryDirectory.scoped(prefix: "broker-rekey")
        let (status, log) = try await runBroker(["rekey"], environment: ["BROKER_DATA_DIR": dir, "BROKER_ENCRYPTION_KEY": "not-base64!"])
        #expect(status == 2)
        #expect(log.contains("BROKER_ENCRYPTION_KEY"))
    }

    /// Every file and directory under `root`: its bytes (files), mode and modification time, to prove nothing changed.
    static func snapshot(_ root: String) -> [String: String] {
        var entries: [String: String] = [:]
        var status = stat()
        guard stat(root, &status) == 0 else { return [:] }
        entries["."] = "\(status.st_mode) \(status.st_mtim.tv_sec).\(status.st_mtim.tv_nsec)"
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let item = enumerator?.nextObject() as? String {
            let path = root + "/" + item
            guard lstat(path, &status) == 0 else { continue }
            let bytes = FileManager.default.contents(atPath: path).map { Hex.encode(SHA256.hash(Array($0))) } ?? "dir"
            entries[item] = "\(status.st_mode) \(status.st_mtim.tv_sec).\(status.st_mtim.tv_nsec) \(bytes)"
        }
        return entries
    }

    @Test func aDryRunListsWhatWouldBeResealedAndChangesNothing() async throws {
        let dir = NSTemporaryDirectory() + "broker-rekey-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let keyA = "a:" + Base64.encode(SecureRandom.bytes(32))
        let keyB = "b:" + Base64.encode(SecureRandom.bytes(32))
        let now = Date()
        // Two records of an earlier, unencrypted version, then three sealed with key a.
        let plain = try JSONFileAccountRepository(directory: dir, codec: PlainJSONAccountCodec())
        for i in 0..<2 {
            try await plain.put(
                Account(provider: "weibo", uid: "\(i)", accessToken: Secret("REKEY-TOKEN-SENTINEL-\(i)"), createdAt: now, updatedAt: now))
        }
        // The sealed lines as the previous version appended them beside the plaintext ones (a store opened with a key
        // now seals its plaintext records at once): written in a store of their own, then appended to this journal.
        let other = dir + "-sealed"
        defer { try? FileManager.default.removeItem(atPath: other) }
        let sealed = try JSONFileAccountRepository(
            directory: other, codec: EncryptedAccountCodec(keyring: try EncryptionKeyring.parse(keyA)))
        for i in 2..<5 {
            try await sealed.put(
                Account(
                    provider: "weibo", uid: "\(i)", accessToken: Secret("REKEY-TOKEN-SENTINEL-\(i)"),
                    refreshToken: Secret("REKEY-REFRESH-SENTINEL-\(i)"), createdAt: now, updatedAt: now))
        }
        let journal = try #require(FileHandle(forWritingAtPath: dir + "/accounts.journal.1.jsonl"))
        try journal.seekToEnd()
        try journal.write(contentsOf: try #require(FileManager.default.contents(atPath: other + "/accounts.journal.1.jsonl")))
        try journal.close()
        let before = Self.snapshot(dir)

        let plan = try await runBrokerCapturingOutput(
            ["rekey", "--dry-run"], environment: ["BROKER_DATA_DIR": dir, "BROKER_ENCRYPTION_KEY": keyB + "," + keyA])
        #expect(plan.status == 0, "\(plan.stderr)")
        let lines = plan.stdout.split(separator: "\n")
        #expect(lines.first == "rekey --dry-run: 5 of 5 accounts would be re-sealed with key \"b\". Nothing was changed.")
        // Each names where its record lies: the journal, and the line.
        #expect(lines.contains("  weibo:0  plaintext  accounts.journal.1.jsonl line 1"))
        #expect(lines.contains("  weibo:4  sealed with key \"a\"  accounts.journal.1.jsonl line 5"))
        #expect(!plan.stdout.contains("SENTINEL") && !plan.stderr.contains("SENTINEL"))
        #expect(Self.snapshot(dir) == before)

        // The new key alone cannot open the sealed records: the dry run fails as rekey would, naming the record, and changes nothing.
        let refused = try await runBrokerCapturingOutput(
            ["rekey", "--dry-run"], environment: ["BROKER_DATA_DIR": dir, "BROKER_ENCRYPTION_KEY": keyB])
        #expect(refused.status == 1 && refused.stderr.contains(dir + "/accounts.journal.1.jsonl line 3"))
        let badKey = try await runBrokerCapturingOutput(
            ["rekey", "--dry-run"], environment: ["BROKER_DATA_DIR": dir, "BROKER_ENCRYPTION_KEY": "not-base64!"])
        #expect(badKey.status == 2 && badKey.stderr.contains("BROKER_ENCRYPTION_KEY"))
        #expect(Self.snapshot(dir) == before)

        // After the real rekey there is nothing left to do.
        #expect(try await runBroker(["rekey"], environment: ["BROKER_DATA_DIR": dir, "BROKER_ENCRYPTION_KEY": keyB + "," + keyA]).0 == 0)
        let done = try await runBrokerCapturingOutput(
            ["rekey", "--dry-run"], environment: ["BROKER_DATA_DIR": dir, "BROKER_ENCRYPTION_KEY": keyB])
        #expect(
            done.status == 0
                && done.stdout == "rekey --dry-run: all 5 accounts are sealed with key \"b\"; nothing to re-seal. Nothing was changed.\n")
    }

    @Test func aDryRunGeneratesNoKeyCreatesNoDirectoryAndRunsBesideABroker() async throws {
        let dir = NSTemporaryDirectory() + "broker-rekey-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let missing = try await runBrokerCapturingOutput(["rekey", "--dry-run"], environment: ["BROKER_DATA_DIR": dir])
        #expect(missing.status == 0 && missing.stdout.contains("no account is stored under \(dir)"))
        #expect(!FileManager.default.fileExists(atPath: dir))

        let plain = try JSONFileAccountRepository(directory: dir, codec: PlainJSONAccountCodec())
        try await plain.put(Account(provider: "weibo", uid: "1", accessToken: Secret("t"), createdAt: Date(), updatedAt: Date()))
        let before = Self.snapshot(dir)
        let unkeyed = try await runBrokerCapturingOutput(["rekey", "--dry-run"], environment: ["BROKER_DATA_DIR": dir])
        #expect(unkeyed.status == 0)
        #expect(
            unkeyed.stdout.hasPrefix(
                "rekey --dry-run: 1 of 1 accounts would be re-sealed with a new key, generated into \(dir)/encryption-key."))
        #expect(Self.snapshot(dir) == before)
        #expect(!FileManager.default.fileExists(atPath: dir + "/encryption-key"))

        // rekey proper refuses to run under a broker; the dry run only reads, so it may. The broker sealed the
        // plaintext record of the earlier version as it started, with the key it generated.
        let broker = try await BrokerProcess.start(environment: ["BROKER_DATA_DIR": dir])
        let beside = try await runBrokerCapturingOutput(["rekey", "--dry-run"], environment: ["BROKER_DATA_DIR": dir])
        #expect(beside.status == 0 && beside.stdout.contains("all 1 accounts are sealed with key"), "\(beside.stdout)")
        broker.signal(SIGTERM)
        #expect(await broker.waitForExit(timeout: 60) == 0)
    }
}
