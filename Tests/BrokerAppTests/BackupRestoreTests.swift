import BrokerCore
import BrokerFakeProviders
import BrokerFileStore
import BrokerHTTP
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

#if canImport(Glibc)
import Glibc
#endif

/// `POST /backup`, `token-broker backup` and `token-broker restore`: a backup taken while sign-ins keep writing
/// parses as a snapshot, a restored directory serves the same accounts, and restore refuses what it must.
@Suite(.serialized, .scoped) struct BackupRestoreTests {
    static let clientSecret = "BACKUP-CLIENT-SECRET-SENTINEL-0123456789"
    static let opsKey = "BACKUP-OPS-KEY-SENTINEL-0123456789abcdef"
    static let encryptionKey = "k1:" + Data((0..<32).map { UInt8($0 &* 7 &+ 3) }).base64EncodedString()
    static let otherKey = "k2:" + Data((0..<32).map { UInt8($0 &* 5 &+ 1) }).base64EncodedString()

    /// A broker (in process, on a socket) whose `acme` provider makes a new account at every sign-in.
    struct Setup: Sendable {
        let harness: BrokerHarness
        let provider: FakeOAuth2Provider
        let root: String

        var ops: [(String, String)] { [("Authorization", "Bearer " + BackupRestoreTests.opsKey)] }

        func connect() async -> Bool {
            await Browser(brokerPort: harness.port, providerPort: provider.port).connect(provider: "acme")?.status == 200
        }

        /// `POST /backup` with the API key: the status and the answer's JSON object.
        func backup() async throws -> (status: Int, json: [String: Any]) {
            let reply = try #require(await TestHTTP.send(port: harness.port, method: "POST", target: "/backup", headers: ops))
            return (reply.status, (try? JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any]) ?? [:])
        }

        /// `GET /account?id=` with the API key: the access token, or nil.
        func accessToken(_ id: String, port: Int? = nil) async -> String? {
            let reply = await TestHTTP.send(port: port ?? harness.port, target: "/account?id=" + id, headers: ops)
            guard reply?.status == 200, let body = reply?.body else { return nil }
            return (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["access_token"] as? String
        }

        /// The environment `token-broker restore` runs with.
        func restoreEnvironment(key: String? = BackupRestoreTests.encryptionKey) -> [String: String] {
            var environment = ["PATH": "/usr/bin:/bin"]
            environment["BROKER_ENCRYPTION_KEY"] = key
            return environment
        }
    }

    static func setUp(accounts: Int) async throws -> Setup {
        var behaviour = FakeOAuth2Provider.Behaviour(dialect: .rfc6749)
        behaviour.users = .counting(from: 1000)
        let provider = try FakeOAuth2Provider.scoped(.rfc6749(clientSecret: clientSecret), behaviour: behaviour)
        let root = try TemporaryDirectory.scoped(prefix: "broker-backup")
        let harness = try BrokerHarness(
            providersJSON: "{\"providers\": {\(provider.providerEntry(secretVariable: "ACME_SECRET"))}}",
            environment: [
                "ACME_SECRET": clientSecret, "BROKER_API_KEYS": "ops:\(opsKey)", "BROKER_ENCRYPTION_KEY": encryptionKey,
                "BROKER_REFRESH_INTERVAL": "0", "BROKER_AUDIT_LOG": root + "/audit.jsonl",
            ])
        let setup = Setup(harness: harness, provider: provider, root: root)
        for _ in 0..<accounts { #expect(await setup.connect()) }
        return setup
    }

    /// The lines of a snapshot file: the header object and the records, checked against the format as they are read.
    static func parseSnapshot(_ path: String) throws -> (header: String, records: [[String: Any]]) {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.hasSuffix("\n"))
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        let header = String(try #require(lines.first))
        let records = try lines.dropFirst().map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        }
        return (header, records)
    }

    @Test func aBackupTakenWhileSignInsWriteIsAWholeSnapshot() async throws {
        let s = try await Self.setUp(accounts: 3)
        let refused = await TestHTTP.send(port: s.harness.port, method: "POST", target: "/backup")
        #expect(refused?.status == 401 && refused?.body.contains("\"error\":\"unauthorized\"") == true)

        // Sign-ins go on, each storing a new account, until both backups are answered.
        let stop = TestEvent()
        let wrote = TestEvent()
        let writer = Task {
            for _ in 0..<400 where stop.count == 0 {
                if await s.connect() { wrote.signal() }
            }
        }
        #expect(await wrote.wait(count: 1))
        let first = try await s.backup()
        #expect(await wrote.wait(count: wrote.count + 1))
        let second = try await s.backup()
        stop.signal()
        await writer.value

        #expect(first.status == 200 && second.status == 200)
        var previous: Set<String> = []
        for answer in [first.json, second.json] {
            let file = try #require(answer["file"] as? String)
            #expect(file.wholeMatch(of: /backups\/accounts-[0-9]{8}T[0-9]{6}Z(-[0-9]+)?\.snapshot\.jsonl/) != nil, "\(file)")
            let path = s.harness.dataDirectory + "/" + file
            let (header, records) = try Self.parseSnapshot(path)
            #expect(header == "{\"snapshot\":\"token-broker accounts\",\"version\":1,\"journal\":1,\"accounts\":\(records.count)}")
            #expect(answer["accounts"] as? Int == records.count && records.count >= 3)
            var info = stat()
            #expect(stat(path, &info) == 0 && answer["bytes"] as? Int == Int(info.st_size))
            let ids = records.compactMap { $0["id"] as? String }
            #expect(ids.count == records.count && ids == ids.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
            #expect(records.allSatisfy { $0["provider"] as? String == "acme" && $0["uid"] is String })
            // Sealed as stored: no token in the clear.
            #expect(!(try String(contentsOfFile: path, encoding: .utf8)).contains("ACME-ACCESS"))
            // Sign-ins only add accounts: the later backup holds every account of the earlier one.
            #expect(previous.isSubset(of: Set(ids)))
            previous = Set(ids)
        }
        #expect(first.json["file"] as? String != second.json["file"] as? String)
        var directory = stat()
        #expect(stat(s.harness.dataDirectory + "/backups", &directory) == 0 && directory.st_mode & 0o777 == 0o700)

        await s.harness.stop()
        let audit = try String(contentsOfFile: s.root + "/audit.jsonl", encoding: .utf8)
        let written = audit.split(separator: "\n").filter { $0.contains("\"event\":\"backup_written\"") }
        #expect(written.count == 2 && written.allSatisfy { $0.contains("\"caller\":\"ops\"") && $0.contains("\"outcome\":\"ok\"") })
        #expect(written.first?.contains("\"file\":\"\(first.json["file"] as? String ?? "")\"") == true)
    }

    @Test func theBackupCommandPrintsTheFileAccountsAndBytes() async throws {
        let s = try await Self.setUp(accounts: 2)
        let environment = ["BROKER_URL": "http://127.0.0.1:\(s.harness.port)", "BROKER_API_KEY": Self.opsKey, "PATH": "/usr/bin:/bin"]
        let run = try await runBrokerCapturingOutput(["backup"], environment: environment)
        #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")
        #expect(run.stdout.hasPrefix("Backup written: backups/accounts-") && run.stdout.contains("(2 accounts, "))
        #expect(run.stdout.contains("BROKER_ENCRYPTION_KEY"))
        let json = try await runBrokerCapturingOutput(["backup", "--json"], environment: environment)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["accounts"] as? Int == 2 && (object["file"] as? String)?.hasPrefix("backups/") == true)
        let wrongKey = try await runBrokerCapturingOutput(
            ["backup"], environment: environment.merging(["BROKER_API_KEY": Self.clientSecret]) { $1 })
        #expect(wrongKey.status == 1 && wrongKey.stderr.contains("401 unauthorized"))
    }

    @Test
    func aRestoredDirectoryServesTheSameAccounts() async throws {
        let s = try await Self.setUp(accounts: 3)
        let backup = try await s.backup()
        let file = s.harness.dataDirectory + "/" + (try #require(backup.json["file"] as? String))
        let ids = try Self.parseSnapshot(file).records.compactMap { $0["id"] as? String }
        var tokens: [String: String] = [:]
        for id in ids { tokens[id] = await s.accessToken(id) }
        #expect(tokens.count == 3)

        let target = s.root + "/restored"
        let run = try await runBrokerCapturingOutput(["restore", file, "--data-dir", target], environment: s.restoreEnvironment())
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.hasPrefix("Restored 3 accounts from \(file) into \(target)/accounts.snapshot.jsonl."))
        #expect(run.stdout.contains("Every secret opens with the key in BROKER_ENCRYPTION_KEY"))
        #expect(
            try String(contentsOfFile: target + "/accounts.snapshot.jsonl", encoding: .utf8)
                == String(contentsOfFile: file, encoding: .utf8))
        var info = stat()
        #expect(stat(target + "/accounts.snapshot.jsonl", &info) == 0 && info.st_mode & 0o777 == 0o600)
        let names = try FileManager.default.contentsOfDirectory(atPath: target)
        #expect(!names.contains { $0.hasPrefix("accounts.journal.") })
        // Sealed records only: the restored store is marked sealed, so a plaintext line added later is refused at start.
        #expect(names.contains(SealedStoreMarker.fileName))

        let restored = try BrokerHarness(
            providersJSON: "{\"providers\": {\(s.provider.providerEntry(secretVariable: "ACME_SECRET"))}}",
            environment: [
                "ACME_SECRET": Self.clientSecret, "BROKER_API_KEYS": "ops:\(Self.opsKey)", "BROKER_ENCRYPTION_KEY": Self.encryptionKey,
                "BROKER_REFRESH_INTERVAL": "0",
            ], dataDirectory: target)
        for (id, token) in tokens {
            #expect(await s.accessToken(id, port: restored.port) == token, "\(id)")
        }
        let list = await TestHTTP.send(port: restored.port, target: "/accounts", headers: s.ops)
        let listed =
            (try? JSONSerialization.jsonObject(with: Data((list?.body ?? "").utf8)) as? [String: Any])?["accounts"] as? [[String: Any]]
        let listedIDs: [String] = listed?.compactMap { $0["id"] as? String } ?? []
        #expect(Set(listedIDs) == Set(ids))
    }

    /// A restored directory started without its key is told so: exit 2, "missing encryption key" naming where the broker
    /// looked, and no key generated (a new key would open none of the records, which would then read as damaged).
    @Test func aRestoredDirectoryStartedWithoutItsKeyRefusesToStartNamingTheMissingKey() async throws {
        let s = try await Self.setUp(accounts: 2)
        let backup = try await s.backup()
        let file = s.harness.dataDirectory + "/" + (try #require(backup.json["file"] as? String))
        let target = s.root + "/restored"
        let restore = try await runBrokerCapturingOutput(
            ["restore", file, "--data-dir", target], environment: s.restoreEnvironment(key: nil))
        #expect(restore.status == 0, "\(restore.stderr)")
        #expect(restore.stdout.contains("the key is not in the backup"))
        let snapshot = try String(contentsOfFile: target + "/accounts.snapshot.jsonl", encoding: .utf8)
        let keyFile = target + "/" + EncryptionKeyring.keyFileName
        let environment = ["BROKER_DATA_DIR": target, "BROKER_API_KEYS": "ops:\(Self.opsKey)"]

        func refusal() async throws -> String {
            guard case .exited(let status, let log) = try await BrokerProcess.launch(environment: environment) else {
                Issue.record("the broker started on \(target) without its key")
                return ""
            }
            #expect(status == 2, "\(log)")
            #expect(log.contains("missing encryption key") && log.contains("BROKER_ENCRYPTION_KEY is not set"))
            #expect(log.contains("no key file at \(keyFile)"))
            #expect(!log.contains("damaged") && !log.contains("corrupt"))
            #expect(!FileManager.default.fileExists(atPath: keyFile))
            #expect(try String(contentsOfFile: target + "/accounts.snapshot.jsonl", encoding: .utf8) == snapshot)
            return log
        }
        _ = try await refusal()
        // `rekey --dry-run` and `rekey` say the same instead of planning with a key that opens nothing.
        for arguments in [["rekey", "--dry-run"], ["rekey"]] {
            let rekey = try await runBrokerCapturingOutput(arguments, environment: environment)
            #expect(rekey.status == 2 && rekey.stderr.contains("missing encryption key"), "\(arguments): \(rekey.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: keyFile))
        // Without the sealed marker (a snapshot copied in by hand), the sealed records themselves tell.
        #expect(unlink(target + "/" + SealedStoreMarker.fileName) == 0)
        _ = try await refusal()

        // With the key of the broker that wrote it, copied in as its key file, the same directory starts and serves.
        try Data((Self.encryptionKey + "\n").utf8).write(to: URL(fileURLWithPath: keyFile))
        #expect(chmod(keyFile, 0o600) == 0)
        guard case .listening(let broker) = try await BrokerProcess.launch(environment: environment) else {
            Issue.record("the broker did not start with its key")
            return
        }
        let id = try #require(try Self.parseSnapshot(file).records.first?["id"] as? String)
        #expect(await s.accessToken(id, port: broker.port) == (await s.accessToken(id)))
        broker.signal(SIGTERM)
        #expect(await broker.waitForExit(timeout: 60) == 0)
    }

    @Test func restoreRefusesADirectoryThatHoldsAccountsUnlessForcedAndALockedOne() async throws {
        let s = try await Self.setUp(accounts: 1)
        let file = s.harness.dataDirectory + "/" + (try #require(try await s.backup().json["file"] as? String))

        // The broker still runs on its directory: its lock refuses the restore, which changes nothing.
        let before = try FileManager.default.contentsOfDirectory(atPath: s.harness.dataDirectory).sorted()
        let locked = try await runBrokerCapturingOutput(
            ["restore", file, "--data-dir", s.harness.dataDirectory, "--force"], environment: s.restoreEnvironment())
        #expect(locked.status == 1 && locked.stdout.isEmpty)
        #expect(
            locked.stderr.contains("in use by another token-broker") && locked.stderr.contains("stop the broker first"), "\(locked.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: s.harness.dataDirectory).sorted() == before)

        let target = s.root + "/restored"
        #expect(
            try await runBrokerCapturingOutput(["restore", file, "--data-dir", target], environment: s.restoreEnvironment()).status == 0)
        let again = try await runBrokerCapturingOutput(["restore", file, "--data-dir", target], environment: s.restoreEnvironment())
        #expect(
            again.status == 1 && again.stderr.contains("already holds accounts (accounts.sealed, accounts.snapshot.jsonl)"),
            "\(again.stderr)")
        #expect(again.stderr.contains("--force"))

        // Forced: what was there moves to backups/replaced-<time>/ and the backup takes its place.
        try Data("{\"put\":{}}\n".utf8).write(to: URL(fileURLWithPath: target + "/accounts.journal.2.jsonl"))
        let forced = try await runBrokerCapturingOutput(
            ["restore", "--force", "--data-dir=" + target, file], environment: s.restoreEnvironment())
        #expect(forced.status == 0, "\(forced.stderr)")
        let replaced = try FileManager.default.contentsOfDirectory(atPath: target + "/backups")
        #expect(replaced.count == 1 && replaced[0].hasPrefix("replaced-"))
        let moved = try FileManager.default.contentsOfDirectory(atPath: target + "/backups/" + replaced[0]).sorted()
        #expect(moved == ["accounts.journal.2.jsonl", "accounts.sealed", "accounts.snapshot.jsonl"])
        #expect(forced.stdout.contains("are in \(target)/backups/\(replaced[0])/"))
        #expect(!FileManager.default.fileExists(atPath: target + "/accounts.journal.2.jsonl"))
        #expect(FileManager.default.fileExists(atPath: target + "/accounts.snapshot.jsonl"))

        // A directory of the former layout, one file per account: it holds accounts too (a broker would migrate them).
        let former = s.root + "/former"
        try FileManager.default.createDirectory(atPath: former + "/accounts", withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: URL(fileURLWithPath: former + "/accounts/acme%3A1.json"))
        let refused = RestoreCommand(file: file, dataDirectory: former).run(environment: s.restoreEnvironment())
        #expect(refused.status == 1 && refused.failure?.reason.contains("already holds accounts (accounts)") == true)
        let forcedFormer = RestoreCommand(file: file, dataDirectory: former, force: true).run(environment: s.restoreEnvironment())
        #expect(forcedFormer.status == 0)
        let aside = try FileManager.default.contentsOfDirectory(atPath: former + "/backups")
        #expect(aside.count == 1 && FileManager.default.fileExists(atPath: former + "/backups/\(aside[0])/accounts/acme%3A1.json"))
        #expect(!FileManager.default.fileExists(atPath: former + "/accounts"))
        // An empty one holds nothing: it is removed, so the snapshot does not sit beside a half-migrated layout.
        let empty = s.root + "/empty"
        try FileManager.default.createDirectory(atPath: empty + "/accounts", withIntermediateDirectories: true)
        #expect(RestoreCommand(file: file, dataDirectory: empty).run(environment: s.restoreEnvironment()).status == 0)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: empty).sorted() == [
                "accounts.sealed", "accounts.snapshot.jsonl", "broker.lock",
            ])
    }

    @Test func aDamagedBackupIsRefusedNamingTheLine() async throws {
        let s = try await Self.setUp(accounts: 3)
        let file = s.harness.dataDirectory + "/" + (try #require(try await s.backup().json["file"] as? String))
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").map(String.init)
        let target = s.root + "/restored"
        func restore(_ content: String, key: String? = BackupRestoreTests.encryptionKey) throws -> AccountsClient.Outcome {
            let path = s.root + "/damaged.jsonl"
            try Data(content.utf8).write(to: URL(fileURLWithPath: path))
            return RestoreCommand(file: path, dataDirectory: target).run(environment: s.restoreEnvironment(key: key))
        }
        func refusal(_ outcome: AccountsClient.Outcome) -> String { outcome.status == 1 ? outcome.failure?.reason ?? "" : "" }

        var cut = lines
        cut[2] = String(cut[2].dropLast(9))
        #expect(refusal(try restore(cut.joined(separator: "\n") + "\n")).contains("damaged.jsonl line 3: "))
        #expect(
            refusal(try restore(lines.dropLast().joined(separator: "\n") + "\n")).contains("the header says 3 accounts, the file holds 2"))
        #expect(refusal(try restore(lines.joined(separator: "\n"))).contains("line 4: does not end with a newline"))
        #expect(refusal(try restore((lines + [lines[1]]).joined(separator: "\n") + "\n")).contains("line 5: is one record line more"))
        var duplicate = lines
        duplicate[3] = lines[1]
        #expect(refusal(try restore(duplicate.joined(separator: "\n") + "\n")).contains("line 4: account \"acme:"))
        // Records out of id order (the store finds them by binary search): the later line is named.
        var swapped = lines
        swapped.swapAt(1, 2)
        let outOfOrder = refusal(try restore(swapped.joined(separator: "\n") + "\n"))
        #expect(
            outOfOrder.contains("damaged.jsonl line 3: account \"acme:")
                && outOfOrder.contains("\" on line 2: a backup holds its records in id order"), "\(outOfOrder)")
        #expect(refusal(try restore(lines.dropFirst().joined(separator: "\n") + "\n")).contains("line 1: is not a snapshot header"))
        #expect(refusal(try restore("")).contains("the file is empty"))
        // A plaintext record among sealed ones, with a token of the forger's choice: a broker that seals wrote none.
        let victim = try #require(try JSONSerialization.jsonObject(with: Data(lines[2].utf8)) as? [String: Any])
        let forged = Account.make(
            provider: try #require(victim["provider"] as? String), uid: try #require(victim["uid"] as? String), accessToken: "forged-token")
        let plaintext = try JSONSerialization.jsonObject(with: Data(try PlainJSONAccountCodec().encode(forged)))
        var injected = lines
        injected[2] = String(decoding: try JSONSerialization.data(withJSONObject: plaintext, options: [.sortedKeys]), as: UTF8.self)
        let mixed = refusal(try restore(injected.joined(separator: "\n") + "\n"))
        #expect(mixed.contains("damaged.jsonl line 3: is a plaintext record among sealed ones"), "\(mixed)")
        #expect(!mixed.contains("forged-token"))
        // A key that does not open the records: the broker started on them would not start either.
        let wrongKey = refusal(try restore(lines.joined(separator: "\n") + "\n", key: Self.otherKey))
        #expect(wrongKey.contains("line 2: ") && wrongKey.contains("\"k1\""), "\(wrongKey)")
        // Nothing was installed by any of them.
        #expect(!FileManager.default.fileExists(atPath: target + "/accounts.snapshot.jsonl"))
        // Without any key the records are checked as far as they can be, and the report says the key is needed.
        let keyless = try restore(lines.joined(separator: "\n") + "\n", key: nil)
        #expect(keyless.status == 0 && keyless.output.contains("sealed with key id \"k1\", and the key is not in the backup"))

        // Through the command line too, with the exit status.
        let bad = s.root + "/bad.jsonl"
        try Data((cut.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: bad))
        let refused = try await runBrokerCapturingOutput(
            ["restore", bad, "--data-dir", s.root + "/other"], environment: s.restoreEnvironment())
        #expect(refused.status == 1 && refused.stderr.contains("restore refused: \(bad) line 3: "), "\(refused.stderr)")
    }

    @Test func aBackupThatCannotBeWrittenIsStorageUnavailableAndAudited() async throws {
        let s = try await Self.setUp(accounts: 1)
        // Something that is not a directory where backups go: nothing can be written there.
        try Data("not a directory".utf8).write(to: URL(fileURLWithPath: s.harness.dataDirectory + "/backups"))
        let reply = try #require(await TestHTTP.send(port: s.harness.port, method: "POST", target: "/backup", headers: s.ops))
        #expect(reply.status == 503 && reply.body.contains("\"error\":\"storage_unavailable\""), "\(reply.body)")
        #expect(reply.header("Cache-Control") == "no-store")
        // The broker goes on serving.
        #expect(await s.connect())
        await s.harness.stop()
        let audit = try String(contentsOfFile: s.root + "/audit.jsonl", encoding: .utf8)
        #expect(audit.contains("\"event\":\"backup_written\"") && audit.contains("\"outcome\":\"storage_unavailable\""))
    }

    @Test func aBrokerOnRedisAnswersNotSupported() async throws {
        let redis = try await RedisServer.scoped(persistent: false)
        let root = try TemporaryDirectory.scoped(prefix: "broker-backup-redis")
        let configuration = try BrokerConfiguration.from(environment: [
            "BROKER_PORT": "0", "BROKER_DATA_DIR": root + "/data", "BROKER_STORE": "redis://127.0.0.1:\(redis.port)/0",
            "BROKER_API_KEY": BrokerHarness.apiKey, "BROKER_ENCRYPTION_KEY": Self.encryptionKey,
            "BROKER_SECRET": "shared-cookie-secret-shared-cookie-secret",
        ])
        let broker = try await Broker.make(
            configuration: configuration,
            logger: BrokerLogger(format: .json, writer: LogWriter(fd: open(root + "/broker.log", O_CREAT | O_WRONLY | O_APPEND, 0o600))))
        let reply = await broker.server.router.respond(
            to: .make(.POST, "/backup", headers: [("Authorization", "Bearer " + BrokerHarness.apiKey)]))
        #expect(reply.status.code == 409)
        let body = String(decoding: reply.body, as: UTF8.self)
        #expect(body.contains("\"error\":\"not_supported\"") && body.contains("BGSAVE"))
        #expect(!FileManager.default.fileExists(atPath: root + "/data/backups"))
        await broker.shutdown()
    }
}
