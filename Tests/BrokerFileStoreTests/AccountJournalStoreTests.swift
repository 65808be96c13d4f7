import BrokerCore
import BrokerCrypto
import BrokerFileStore
import BrokerTestSupport
import Foundation
import Glibc
import Testing

/// The file store's snapshot and journal on a real file system: what a restart reads after torn lines, compactions and crashes.
struct AccountJournalStoreTests {
    private static let key = "k1:" + Base64.encode((0..<32).map { UInt8($0) })
    private func codec() throws -> EncryptedAccountCodec {
        EncryptedAccountCodec(keyring: try EncryptionKeyring.parse(Self.key, source: "test"))
    }

    private func journal(_ directory: String, _ generation: Int = 1) -> String {
        directory + "/" + AccountStoreFormat.journalName(generation)
    }

    private func lines(_ path: String) -> [String] {
        (FileProbe.bytes(path).map { String(decoding: $0, as: UTF8.self) } ?? "").split(separator: "\n").map(String.init)
    }

    @Test func aWriteIsOneJournalLineAndSurvivesARestart() async throws {
        try await TemporaryDirectory.with { directory in
            let repository = try JSONFileAccountRepository(directory: directory, codec: codec())
            try await repository.put(.make(uid: "1", accessToken: "token-one"))
            _ = try await repository.delete(id: Account.make(uid: "1").accountID)
            try await repository.put(.make(uid: "2", accessToken: "token-two"))
            let written = lines(journal(directory))
            #expect(written.count == 3)
            #expect(written[0].hasPrefix("{\"put\":{") && written[1] == "{\"delete\":\"github:1\"}" && written[2].hasPrefix("{\"put\":{"))
            // Sealed as before: the token is not in the file.
            #expect(!written.joined().contains("token-two"))
            #expect(FileProbe.mode(journal(directory)) == 0o600)
            let reopened = try JSONFileAccountRepository(directory: directory, codec: codec())
            #expect(try await reopened.get(id: "github:1") == nil)
            #expect(try await reopened.get(id: "github:2")?.accessToken.value == "token-two")
        }
    }

    @Test func aTornLastLineIsIgnoredAndCutOffAtStart() async throws {
        try await TemporaryDirectory.with { directory in
            let repository = try JSONFileAccountRepository(directory: directory, codec: codec())
            try await repository.put(.make(uid: "1"))
            try await repository.put(.make(uid: "2"))
            let complete = try #require(FileProbe.bytes(journal(directory)))
            // A third write cut short by a crash: half a line, no newline.
            let torn = Array("{\"put\":{\"access_token\":{\"cipher".utf8)
            try Data(complete + torn).write(to: URL(fileURLWithPath: journal(directory)))
            let reopened = try JSONFileAccountRepository(directory: directory, codec: codec())
            #expect(reopened.tornLineCutAtOpen)
            #expect(try await reopened.list(provider: nil).map(\.id) == ["github:1", "github:2"])
            #expect(FileProbe.bytes(journal(directory)) == complete)
            // Appends after it start on a clean line.
            try await reopened.put(.make(uid: "3"))
            let again = try JSONFileAccountRepository(directory: directory, codec: codec())
            #expect(try await again.list(provider: nil).map(\.id) == ["github:1", "github:2", "github:3"])
            #expect(!again.tornLineCutAtOpen)
        }
    }

    @Test func aDamagedLineBeforeTheLastStopsStartUpNamingItAndChangesNothing() async throws {
        try await TemporaryDirectory.with { directory in
            let repository = try JSONFileAccountRepository(directory: directory, codec: codec())
            try await repository.put(.make(uid: "1"))
            try await repository.put(.make(uid: "2"))
            var text = lines(journal(directory))
            text.insert("{\"put\":{\"garbage\"}", at: 1)
            let damaged = Data((text.joined(separator: "\n") + "\n").utf8)
            try damaged.write(to: URL(fileURLWithPath: journal(directory)))
            #expect {
                _ = try JSONFileAccountRepository(directory: directory, codec: codec())
            } throws: { error in
                guard case .corrupt(let path, _) = error as? StoreError else { return false }
                return path == journal(directory) + " line 2"
            }
            #expect(FileProbe.bytes(journal(directory)) == Array(damaged))
        }
    }

    @Test func compactionUnderConcurrentWritesKeepsEveryAcknowledgedChange() async throws {
        try await TemporaryDirectory.with { directory in
            // A small threshold: the journal is compacted many times while 16 writers go on.
            let repository = try JSONFileAccountRepository(directory: directory, codec: codec(), compactionThreshold: 8 << 10)
            let expected = try await withThrowingTaskGroup(of: [AccountID: String?].self) { group in
                for writer in 0..<16 {
                    group.addTask {
                        var mine: [AccountID: String?] = [:]
                        for step in 0..<60 {
                            let uid = "w\(writer)-\(step % 7)"
                            if step % 11 == 10 {
                                _ = try await repository.delete(id: "github:\(uid)")
                                mine["github:\(uid)"] = .some(nil)
                            } else {
                                try await repository.put(.make(uid: uid, accessToken: "t-\(writer)-\(step)"))
                                mine["github:\(uid)"] = .some("t-\(writer)-\(step)")
                            }
                        }
                        return mine
                    }
                }
                var all: [AccountID: String?] = [:]
                for try await part in group { all.merge(part) { $1 } }
                return all
            }
            try await repository.compact()
            let sizes = repository.storeSizes
            #expect(sizes.generation > 2)
            #expect(
                AccountStoreFiles.fileNames(in: directory) == [
                    AccountStoreFormat.journalName(sizes.generation), AccountStoreFormat.snapshotName,
                ])
            for reopened in [repository, try JSONFileAccountRepository(directory: directory, codec: codec())] {
                for (id, token) in expected {
                    #expect(try await reopened.get(id: id)?.accessToken.value == token, "\(id)")
                }
                #expect(try await reopened.list(provider: nil).count == expected.values.compactMap { $0 }.count)
            }
        }
    }

    /// Each point a compaction can be killed at leaves files that replay to the same accounts.
    @Test func aCompactionKilledAtAnyStepLeavesTheSameAccounts() async throws {
        try await TemporaryDirectory.with { root in
            let directory = root + "/data"
            let repository = try JSONFileAccountRepository(directory: directory, codec: codec(), compactionThreshold: .max)
            for uid in 0..<20 { try await repository.put(.make(uid: String(uid), accessToken: "first-\(uid)")) }
            try await repository.compact()
            for uid in 0..<10 { try await repository.put(.make(uid: String(uid), accessToken: "second-\(uid)")) }
            for uid in 15..<20 { _ = try await repository.delete(id: "github:\(uid)") }
            let expected = try await repository.list(provider: nil)
            let before = root + "/before"
            try FileManager.default.copyItem(atPath: directory, toPath: before)
            try await repository.compact()
            let after = root + "/after"
            try FileManager.default.copyItem(atPath: directory, toPath: after)
            let generation = repository.storeSizes.generation

            // Killed after opening the next journal, before the snapshot's rename: a temporary snapshot and an empty journal.
            let killedWriting = root + "/killed-writing"
            try FileManager.default.copyItem(atPath: before, toPath: killedWriting)
            try FileProbe.plant(
                "{\"snapshot\":\"token-broker accounts\",\"version\":1,\"jour",
                at: killedWriting + "/accounts.snapshot.jsonl.tmp.0123456789abcdef")
            try FileProbe.plant("", at: journal(killedWriting, generation))
            // Killed after the rename, before the old journal was deleted.
            let killedDeleting = root + "/killed-deleting"
            try FileManager.default.copyItem(atPath: after, toPath: killedDeleting)
            try FileManager.default.copyItem(atPath: journal(before, generation - 1), toPath: journal(killedDeleting, generation - 1))

            for state in [killedWriting, killedDeleting, after] {
                let reopened = try JSONFileAccountRepository(directory: state, codec: codec())
                #expect(try await reopened.list(provider: nil) == expected, "\(state)")
                #expect(!AccountStoreFiles.fileNames(in: state).contains { $0.contains(".tmp.") }, "\(state)")
            }
            #expect(!FileManager.default.fileExists(atPath: journal(killedDeleting, generation - 1)))
        }
    }

    @Test func aBackupIsASnapshotABrokerStartsFrom() async throws {
        try await TemporaryDirectory.with { root in
            let repository = try JSONFileAccountRepository(directory: root + "/data", codec: codec())
            for uid in 0..<50 { try await repository.put(.make(uid: String(uid), accessToken: "token-\(uid)")) }
            _ = try await repository.delete(id: "github:7")
            try FileManager.default.createDirectory(atPath: root + "/restored", withIntermediateDirectories: true)
            let written = try await repository.backup(to: root + "/restored/" + AccountStoreFormat.snapshotName)
            #expect(written.accounts == 49)
            // Writes after the backup are not in it.
            try await repository.put(.make(uid: "late"))
            let restored = try JSONFileAccountRepository(directory: root + "/restored", codec: codec())
            #expect(try await restored.list(provider: nil) == (try await repository.list(provider: nil)).filter { $0.uid != "late" })
            #expect(
                lines(root + "/restored/" + AccountStoreFormat.snapshotName).first
                    == "{\"snapshot\":\"token-broker accounts\",\"version\":1,\"journal\":1,\"accounts\":49}")
        }
    }

    /// A backup killed before its rename leaves a temporary file as large as the store: start-up removes it, and only it.
    @Test func aBackupKilledMidWayLeavesNoTemporaryAfterTheNextStart() async throws {
        try await TemporaryDirectory.with { directory in
            let repository = try JSONFileAccountRepository(directory: directory, codec: codec())
            for uid in 0..<3 { try await repository.put(.make(uid: String(uid))) }
            let backups = directory + "/" + AccountStoreFormat.backupDirectoryName
            try FileManager.default.createDirectory(atPath: backups + "/replaced-20261204T100000Z", withIntermediateDirectories: true)
            let finished = backups + "/accounts-20261204T100000Z.snapshot.jsonl"
            _ = try await repository.backup(to: finished)
            let killed = backups + "/accounts-20261204T100001Z.snapshot.jsonl.tmp.0123456789abcdef"
            try FileProbe.plant("{\"snapshot\":\"token-broker accounts\",\"version\":1,\"jour", at: killed)
            // Not a temporary of ours: a name without the random suffix stays.
            try FileProbe.plant("notes", at: backups + "/accounts.snapshot.jsonl.tmp.notes")
            _ = try JSONFileAccountRepository(directory: directory, codec: codec())
            #expect(!FileManager.default.fileExists(atPath: killed))
            #expect(FileManager.default.fileExists(atPath: finished))
            #expect(FileManager.default.fileExists(atPath: backups + "/replaced-20261204T100000Z"))
            #expect(FileManager.default.fileExists(atPath: backups + "/accounts.snapshot.jsonl.tmp.notes"))
        }
    }

    @Test func aSnapshotWhoseCountDisagreesIsRefused() async throws {
        try await TemporaryDirectory.with { directory in
            let repository = try JSONFileAccountRepository(directory: directory, codec: codec())
            for uid in 0..<3 { try await repository.put(.make(uid: String(uid))) }
            try await repository.compact()
            let path = directory + "/" + AccountStoreFormat.snapshotName
            var text = lines(path)
            text.removeLast()
            try Data((text.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
            #expect {
                _ = try JSONFileAccountRepository(directory: directory, codec: codec())
            } throws: { error in
                guard case .corrupt(let failing, let reason) = error as? StoreError else { return false }
                return failing == path && reason.contains("counts 3")
            }
        }
    }

    /// Start-up proves every key id still in use by opening one record sealed with it, even when the journal re-sealed
    /// the account that would have proved it; and records a later line replaced never stop it.
    @Test func aWrongKeyStillInUseStopsStartUpAndReplacedRecordsDoNot() async throws {
        try await TemporaryDirectory.with { directory in
            let one = "k1:" + Base64.encode([UInt8](repeating: 1, count: 32))
            let two = "k2:" + Base64.encode([UInt8](repeating: 2, count: 32))
            let wrongOne = "k1:" + Base64.encode([UInt8](repeating: 9, count: 32))
            func codec(_ keys: String) throws -> EncryptedAccountCodec {
                EncryptedAccountCodec(keyring: try EncryptionKeyring.parse(keys, source: "test"))
            }
            let first = try JSONFileAccountRepository(directory: directory, codec: codec(one))
            try await first.put(.make(uid: "1", accessToken: "one"))
            try await first.put(.make(uid: "2", accessToken: "two"))
            // github:1, the account that sorts first, is re-sealed with k2; github:2 still needs k1.
            let rotated = try JSONFileAccountRepository(directory: directory, codec: codec(two + "," + one))
            try await rotated.put(.make(uid: "1", accessToken: "one again"))
            #expect(throws: StoreError.self) {
                _ = try JSONFileAccountRepository(directory: directory, codec: codec(two + "," + wrongOne), openSealedInBackground: false)
            }
            // Once github:2 is re-sealed too, k1 is needed by no current record: its replaced lines do not stop start-up.
            try await rotated.put(.make(uid: "2", accessToken: "two again"))
            let newOnly = try JSONFileAccountRepository(directory: directory, codec: codec(two))
            #expect(try await newOnly.get(id: "github:2")?.accessToken.value == "two again")
            #expect(try await newOnly.get(id: "github:1")?.accessToken.value == "one again")
        }
    }

    @Test func aSnapshotHoldingOneAccountTwiceIsRefusedNamingTheSecondLine() async throws {
        try await TemporaryDirectory.with { directory in
            let repository = try JSONFileAccountRepository(directory: directory, codec: codec())
            for uid in 0..<3 { try await repository.put(.make(uid: String(uid))) }
            let records = try AccountStoreFiles.records(in: directory)
            let twice = try #require(records["github:1"])
            try AccountStoreFiles.install(records.map { ($0.key, $0.value) } + [("github:1", twice)], in: directory)
            #expect {
                _ = try JSONFileAccountRepository(directory: directory, codec: codec())
            } throws: { error in
                guard case .corrupt(let path, let reason) = error as? StoreError else { return false }
                return path == directory + "/" + AccountStoreFormat.snapshotName + " line 4"
                    && reason == "a second record of account github:1"
            }
        }
    }

    /// Many sealed accounts written straight into a snapshot (several chunks of the parallel load), in id order.
    private func seedSnapshot(_ directory: String, count: Int) throws -> [String] {
        let codec = try codec()
        let records = try (0..<count).map { uid in
            (id: "github:\(uid)", bytes: JSONLine.compact(try codec.encode(.make(uid: String(uid), accessToken: "token-\(uid)"))))
        }
        try AccountStoreFiles.install(records, in: directory)
        try SealedStoreMarker.write(in: directory)
        return lines(directory + "/" + AccountStoreFormat.snapshotName)
    }

    /// A journal line putting `account`, sealed by `codec` (or in plaintext, as a store of an earlier version wrote it).
    private func putLine(_ account: Account, codec: some AccountRecordCodec) throws -> String {
        "{\"put\":" + String(decoding: JSONLine.compact(try codec.encode(account)), as: UTF8.self) + "}"
    }

    /// A journal long enough to be decoded in many chunks on several threads (each at least 64 KiB of whole lines):
    /// puts, rewrites and deletes of the same accounts far apart and on both sides of every chunk boundary.
    private func longJournal(codec: some AccountRecordCodec, rounds: Int = 4, accounts: Int = 700) throws -> (
        lines: [String], expected: [String: String]
    ) {
        var lines: [String] = []
        var expected: [String: String] = [:]
        for round in 0..<rounds {
            for uid in 0..<accounts {
                let id = "github:\(uid)"
                // Each account is written every round; a seventh of them deleted in one round, some then written again.
                if (uid + round) % 7 == 0 {
                    lines.append("{\"delete\":\"\(id)\"}")
                    expected[id] = nil
                } else {
                    let token = "token-\(uid)-\(round)"
                    lines.append(try putLine(.make(uid: String(uid), accessToken: token), codec: codec))
                    expected[id] = token
                }
            }
        }
        return (lines, expected)
    }

    @Test func aLongJournalDecodedOnSeveralThreadsAppliesEveryLineInOrder() async throws {
        try await TemporaryDirectory.with { directory in
            let codec = try codec()
            let (text, expected) = try longJournal(codec: codec)
            let bytes = Array((text.joined(separator: "\n") + "\n").utf8)
            #expect(bytes.count > 8 * (64 << 10))
            try SealedStoreMarker.write(in: directory)
            // A torn last line after them, as a crash mid-write leaves it: cut off, everything before it kept.
            try Data(bytes + Array("{\"put\":{\"access_to".utf8)).write(to: URL(fileURLWithPath: journal(directory)))
            let repository = try JSONFileAccountRepository(directory: directory, codec: codec, openSealedInBackground: false)
            #expect(repository.tornLineCutAtOpen)
            #expect(FileProbe.bytes(journal(directory)) == bytes)
            let listed = try await repository.list(provider: nil)
            #expect(listed.count == expected.count)
            #expect(Dictionary(uniqueKeysWithValues: listed.map { ($0.id, $0.accessToken.value) }) == expected)
        }
    }

    /// A store of an earlier version (not marked sealed) whose long journal mixes plaintext and sealed records of the
    /// same accounts: each account's latest record decides whether it is sealed at this start.
    @Test func aLongLegacyJournalMixingPlaintextAndSealedRecordsSealsExactlyTheLatestPlaintextOnes() async throws {
        try await TemporaryDirectory.with { directory in
            let codec = try codec()
            var text: [String] = []
            var latestPlain: [String: Bool] = [:]
            var expected: [String: String] = [:]
            for round in 0..<4 {
                for uid in 0..<700 {
                    let plain = (uid * 3 + round) % 5 == 0
                    let token = "token-\(uid)-\(round)"
                    let account = Account.make(uid: String(uid), accessToken: token)
                    text.append(plain ? try putLine(account, codec: PlainJSONAccountCodec()) : try putLine(account, codec: codec))
                    latestPlain["github:\(uid)"] = plain
                    expected["github:\(uid)"] = token
                }
            }
            try Data((text.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: journal(directory)))
            let repository = try JSONFileAccountRepository(directory: directory, codec: codec, openSealedInBackground: false)
            #expect(repository.sealedAtOpen == latestPlain.values.filter { $0 }.count)
            let listed = try await repository.list(provider: nil)
            #expect(Dictionary(uniqueKeysWithValues: listed.map { ($0.id, $0.accessToken.value) }) == expected)
            // Sealed now: no token of the latest round is in the journal in plaintext.
            let reopened = try JSONFileAccountRepository(directory: directory, codec: codec, openSealedInBackground: false)
            #expect(reopened.sealedAtOpen == 0)
            #expect(try await reopened.list(provider: nil).count == 700)
        }
    }

    @Test func aLongJournalsFirstBadLineStopsStartUpNamingItWhicheverThreadDecodedIt() async throws {
        for bad in [1, 1_000, 1_999, 2_600] {
            try await TemporaryDirectory.with { directory in
                let codec = try codec()
                var (text, _) = try longJournal(codec: codec)
                // A damaged record at line `bad`, a plaintext one (refused in a sealed store) and a line that is
                // neither put nor delete after it: the first in file order is the one named.
                text[bad - 1] = "{\"put\":{\"garbage\":1}}"
                text[bad + 100] = try putLine(.make(uid: "forged", accessToken: "forged"), codec: PlainJSONAccountCodec())
                text[bad + 150] = "{\"get\":\"github:1\"}"
                try SealedStoreMarker.write(in: directory)
                try Data((text.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: journal(directory)))
                #expect {
                    _ = try JSONFileAccountRepository(directory: directory, codec: codec, openSealedInBackground: false)
                } throws: { error in
                    guard case .corrupt(let path, _) = error as? StoreError else { return false }
                    return path == journal(directory) + " line \(bad)"
                }
                // With the damaged record replaced by a later put, the plaintext line is the first to stop start-up.
                text[bad - 1] = try putLine(.make(uid: "1", accessToken: "fine"), codec: codec)
                try Data((text.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: journal(directory)))
                #expect {
                    _ = try JSONFileAccountRepository(directory: directory, codec: codec, openSealedInBackground: false)
                } throws: { error in
                    guard case .corrupt(let path, let reason) = error as? StoreError else { return false }
                    return path == journal(directory) + " line \(bad + 101)" && reason.contains("plaintext")
                }
            }
        }
    }

    @Test func everyAccountOfALargeSnapshotIsFoundAndKeptThroughWritesAndACompaction() async throws {
        try await TemporaryDirectory.with { directory in
            let written = try seedSnapshot(directory, count: 3_000)
            #expect(written.count == 3_001)
            let repository = try JSONFileAccountRepository(directory: directory, codec: codec(), openSealedInBackground: false)
            for uid in [0, 1, 9, 10, 999, 1_000, 1_500, 2_999] {
                #expect(try await repository.get(id: "github:\(uid)")?.accessToken.value == "token-\(uid)")
            }
            #expect(try await repository.get(id: "github:3000") == nil)
            #expect(try await repository.get(id: "github:") == nil)
            // Removed, rewritten and added around the snapshot's accounts, then compacted: the new snapshot holds the merge.
            _ = try await repository.delete(id: "github:1500")
            try await repository.put(.make(uid: "7", accessToken: "seven again"))
            try await repository.put(.make(uid: "1500x", accessToken: "new"))
            try await repository.compact()
            let compacted = lines(directory + "/" + AccountStoreFormat.snapshotName)
            #expect(compacted.count == 3_001)
            #expect(!compacted.contains { $0.contains("\"uid\":\"1500\"") } && compacted.contains { $0.contains("\"uid\":\"1500x\"") })
            try await repository.put(.make(uid: "8", accessToken: "eight again"))
            let reopened = try JSONFileAccountRepository(directory: directory, codec: codec(), openSealedInBackground: false)
            #expect(try await reopened.get(id: "github:1500") == nil)
            #expect(try await reopened.get(id: "github:1500x")?.accessToken.value == "new")
            #expect(try await reopened.get(id: "github:7")?.accessToken.value == "seven again")
            #expect(try await reopened.get(id: "github:8")?.accessToken.value == "eight again")
            #expect(try await reopened.get(id: "github:2999")?.accessToken.value == "token-2999")
            #expect(try await reopened.list(provider: "github").count == 3_000)
        }
    }

    /// A large snapshot's end users' lists (built after the load, in runs of slots on several threads) list each end
    /// user's accounts in id order across every chunk and run; records that do not decode, mid-chunk, shift no other
    /// account's id; and journal lines read after the snapshot (a repair, a move, a removal, an addition) update them.
    @Test func endUserPagesOfALargeSnapshotFollowItsRecordsAndTheJournalAfterIt() async throws {
        try await TemporaryDirectory.with { directory in
            let codec = try codec()
            // Seven end users, each with accounts in every chunk and run; every eleventh account has none.
            func owner(_ uid: Int) -> String? { uid.isMultiple(of: 11) ? nil : "user-\(uid % 7)" }
            let count = 13_000
            let damaged: Set<Int> = [1_234, 1_235, 6_500, 12_999]
            let records = try (0..<count).map { uid in
                guard !damaged.contains(uid) else {
                    return (id: "github:\(uid)", bytes: Array("{\"id\":\"github:\(uid)\",\"garbage\":1}".utf8))
                }
                var account = Account.make(uid: String(uid), accessToken: "token-\(uid)")
                account.endUser = owner(uid).map { EndUser(id: $0) }
                return (id: account.id, bytes: JSONLine.compact(try codec.encode(account)))
            }
            try AccountStoreFiles.install(records, in: directory)
            try SealedStoreMarker.write(in: directory)
            var owners: [String: String?] = [:]
            for uid in 0..<count where !damaged.contains(uid) { owners["github:\(uid)"] = owner(uid) }
            // Every damaged record is replaced by the journal (else start-up stops); then changes of end user.
            var journalLines: [String] = []
            func put(_ uid: String, _ endUser: String?) throws {
                var account = Account.make(uid: uid, accessToken: "token-\(uid)")
                account.endUser = endUser.map { EndUser(id: $0) }
                journalLines.append(try putLine(account, codec: codec))
                owners["github:\(uid)"] = endUser
            }
            for uid in damaged.sorted() { try put(String(uid), uid == 6_500 ? nil : "user-2") }
            try put("10", "user-5")  // moved from user-3
            try put("22", "user-1")  // had none
            try put("13", nil)  // leaves user-6
            try put("99999", "user-4")  // new
            journalLines.append("{\"delete\":\"github:20\"}")
            owners["github:20"] = nil
            try Data((journalLines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: journal(directory)))

            let repository = try JSONFileAccountRepository(directory: directory, codec: codec, openSealedInBackground: false)
            for user in (0..<8).map({ "user-\($0)" }) {
                let want = owners.filter { $0.value == user }.keys.sorted { ExactKey.precedes($0, $1) }
                var got: [String] = []
                var after: AccountID?
                repeat {
                    let page = try await repository.page(after: after, limit: 500, filter: AccountFilter(endUserID: user))
                    got += page.accounts.map(\.id)
                    // The account in each place is the one of that id (its end user and token are its own).
                    for account in page.accounts {
                        #expect(account.endUser?.id == user && account.accessToken.value == "token-" + account.uid, "\(account.id)")
                    }
                    after = page.nextAfter
                } while after != nil
                #expect(got == want, "\(user)")
            }
            #expect(try await repository.list(provider: nil).count == owners.count)
        }
    }

    @Test func aSnapshotWhoseIdsAreOutOfOrderIsRefusedNamingTheLine() async throws {
        try await TemporaryDirectory.with { directory in
            let written = try seedSnapshot(directory, count: 3_000)
            let snapshot = directory + "/" + AccountStoreFormat.snapshotName
            let expected = { (line: Int, id: String, previous: String) in
                { (error: any Error) -> Bool in
                    guard case .corrupt(let path, let reason) = error as? StoreError else { return false }
                    return path == snapshot + " line \(line)"
                        && reason == "account \(id) comes after \(previous): a snapshot holds its records in id order, so it was damaged"
                }
            }
            func id(_ line: String) -> String {
                let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
                return object?["id"] as? String ?? ""
            }
            // Two neighbours swapped.
            var swapped = written
            swapped.swapAt(2, 3)
            try FileProbe.plant(swapped.joined(separator: "\n") + "\n", at: snapshot)
            #expect { _ = try JSONFileAccountRepository(directory: directory, codec: codec()) } throws: {
                expected(4, id(written[2]), id(written[3]))($0)
            }
            // The second half before the first: each half is in order, the break lies wherever the chunks fall.
            let records = Array(written.dropFirst())
            let rotated = [written[0]] + records[1_500...] + records[..<1_500]
            try FileProbe.plant(rotated.joined(separator: "\n") + "\n", at: snapshot)
            #expect { _ = try JSONFileAccountRepository(directory: directory, codec: codec()) } throws: {
                expected(1_502, id(records[0]), id(records[2_999]))($0)
            }
            // Nothing was changed: the file is as planted.
            #expect(lines(snapshot) == rotated)
        }
    }
}
