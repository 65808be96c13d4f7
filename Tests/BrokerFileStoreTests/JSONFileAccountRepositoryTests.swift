import BrokerCore
import BrokerCrypto
import BrokerFileStore
import BrokerTestSupport
import Foundation
import Glibc
import Testing

/// The JSON-file repository: the shared suite, then durability, permissions and recovery on a real file system.
struct JSONFileAccountRepositoryTests {
    // MARK: Shared suite

    private func conformance(_ check: (RepositoryOpener) async throws -> Void) async throws {
        try await TemporaryDirectory.with { directory in
            try await check { try JSONFileAccountRepository(directory: directory + "/data") }
        }
    }

    @Test func putGetListDelete() async throws { try await conformance(AccountRepositoryConformance.putGetListDelete) }
    @Test func reauthorizationUpdatesSameRecord() async throws {
        try await conformance(AccountRepositoryConformance.reauthorizationUpdatesSameRecord)
    }
    @Test func listFiltersByProviderSortedByID() async throws {
        try await conformance(AccountRepositoryConformance.listFiltersByProviderSortedByID)
    }
    @Test func concurrentUpdatesAreNotLost() async throws {
        try await conformance(AccountRepositoryConformance.concurrentUpdatesAreNotLost)
    }
    @Test func concurrentPutsSurviveRestart() async throws {
        try await conformance(AccountRepositoryConformance.concurrentPutsSurviveRestart)
    }
    @Test func restartPreservesEveryField() async throws { try await conformance(AccountRepositoryConformance.restartPreservesEveryField) }
    @Test func enteredCredentialSurvivesRestart() async throws {
        try await conformance(AccountRepositoryConformance.enteredCredentialSurvivesRestart)
    }
    @Test func pageFiltersAndPages() async throws { try await conformance(AccountRepositoryConformance.pageFiltersAndPages) }
    @Test func pagingUnderConcurrentInserts() async throws {
        try await conformance(AccountRepositoryConformance.pagingUnderConcurrentInserts)
    }
    @Test func updateEdgeCases() async throws { try await conformance(AccountRepositoryConformance.updateEdgeCases) }
    @Test func canonicallyEquivalentIDsAreDistinct() async throws {
        try await conformance(AccountRepositoryConformance.canonicallyEquivalentIDsAreDistinct)
    }
    @Test func longestUIDsAreStorable() async throws { try await conformance(AccountRepositoryConformance.longestUIDsAreStorable) }
    @Test func statusCountsFollowWrites() async throws { try await conformance(AccountRepositoryConformance.statusCountsFollowWrites) }

    /// The kept counts agree with counting every account by hand, through random writes, a restart (a load appends
    /// unsorted expiries) and the writes after it, at moments before, at and after the expiries.
    @Test func keptStatusCountsAgreeWithCountingEveryAccount() async throws {
        try await TemporaryDirectory.with { directory in
            var generator = SystemRandomNumberGenerator()
            func randomAccount() -> Account {
                var account = Account.make(uid: String(Int.random(in: 0..<40, using: &generator)))
                account.expiresAt =
                    Bool.random(using: &generator)
                    ? Date.fixture.addingTimeInterval(Double(Int.random(in: -3...3, using: &generator)) * 60) : nil
                if Bool.random(using: &generator) { account.refreshToken = Secret("refresh") }
                if Int.random(in: 0..<4, using: &generator) == 0 { account.status = .reauthorizationRequired }
                return account
            }
            func check(_ repository: JSONFileAccountRepository) async throws {
                let all = try await repository.list(provider: nil)
                for minutes in -4...4 {
                    let at = Date.fixture.addingTimeInterval(Double(minutes) * 60)
                    var expected = AccountStatusCounts()
                    for account in all { expected.add(account, at: at) }
                    #expect(try await repository.statusCounts(at: at) == expected)
                }
            }
            var repository = try JSONFileAccountRepository(directory: directory + "/data")
            // Writes before a store's first count append; writes after it insert in order: both, in every round.
            for _ in 0..<3 {
                for _ in 0..<2 {
                    for _ in 0..<40 {
                        if Int.random(in: 0..<5, using: &generator) == 0 {
                            _ = try await repository.delete(
                                id: Account.make(uid: String(Int.random(in: 0..<40, using: &generator))).accountID)
                        } else {
                            try await repository.put(randomAccount())
                        }
                    }
                    try await check(repository)
                }
                repository = try JSONFileAccountRepository(directory: directory + "/data")
            }
            try await check(repository)
        }
    }

    // MARK: Files and permissions

    @Test func filesAre0600AndTheDataDirectory0700EvenIfItExisted() async throws {
        try await TemporaryDirectory.with { directory in
            let data = directory + "/data"
            #expect(mkdir(data, 0o755) == 0)
            let repository = try JSONFileAccountRepository(directory: data)
            try await repository.put(Account.make())
            #expect(FileProbe.mode(data + "/" + AccountStoreFormat.journalName(1)) == 0o600)
            try await repository.compact()
            let snapshot = data + "/" + AccountStoreFormat.snapshotName
            #expect(FileProbe.mode(snapshot) == 0o600)
            #expect(FileProbe.mode(data + "/" + AccountStoreFormat.journalName(2)) == 0o600)
            // A snapshot opened up by hand is replaced by one written 0600 at the next compaction.
            #expect(chmod(snapshot, 0o644) == 0)
            try await repository.put(Account.make(accessToken: "rotated"))
            try await repository.compact()
            #expect(FileProbe.mode(snapshot) == 0o600)
            #expect(FileProbe.mode(data + "/" + AccountStoreFormat.journalName(3)) == 0o600)
            #expect(FileProbe.mode(data) == 0o700)
            #expect(AccountStoreFiles.fileNames(in: data) == [AccountStoreFormat.journalName(3), AccountStoreFormat.snapshotName])
        }
    }

    @Test func recordIsReadableJSONWithVersionAndUTCDates() async throws {
        try await TemporaryDirectory.with { directory in
            let repository = try JSONFileAccountRepository(directory: directory)
            try await repository.put(Account.make())
            let bytes = try #require(try AccountStoreFiles.records(in: directory)["github:1001"])
            let json = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
            #expect(json["version"] as? Int == 1)
            #expect(json["id"] as? String == "github:1001")
            #expect(json["created_at"] as? String == "2026-11-30T08:00:00Z")
            // One line of the journal, readable with any JSON-lines tool.
            let journal = FileProbe.bytes(directory + "/" + AccountStoreFormat.journalName(1))
            #expect(journal == Array("{\"put\":".utf8) + bytes + Array("}\n".utf8))
        }
    }

    @Test func idsWithUnsafeCharactersAreStoredAsTheyAreAndMakeNoFiles() async throws {
        try await TemporaryDirectory.with { directory in
            let repository = try JSONFileAccountRepository(directory: directory)
            let tricky = ["../../etc/passwd", "a/b", "a%2Fb", "x.tmp.0123456789abcdef", "ü ñ", "..", "line\nbreak", "quote\"\\"]
            let accounts = tricky.map { Account.make(provider: "weird", uid: $0) }
            for account in accounts { try await repository.put(account) }
            #expect(try AccountStoreFiles.ids(in: directory) == accounts.sortedByID().map(\.id))
            #expect(AccountStoreFiles.fileNames(in: directory) == [AccountStoreFormat.journalName(1)])
            #expect(try await JSONFileAccountRepository(directory: directory).list(provider: "weird") == accounts.sortedByID())
            try await repository.compact()
            #expect(try await JSONFileAccountRepository(directory: directory).list(provider: "weird") == accounts.sortedByID())
        }
    }

    @Test func deleteRemovesTheAccountFromDisk() async throws {
        try await TemporaryDirectory.with { directory in
            let repository = try JSONFileAccountRepository(directory: directory)
            try await repository.put(Account.make(uid: "1"))
            try await repository.put(Account.make(uid: "2"))
            _ = try await repository.delete(id: "github:1")
            #expect(try AccountStoreFiles.ids(in: directory) == ["github:2"])
            let reopened = try JSONFileAccountRepository(directory: directory)
            #expect(try await reopened.list(provider: nil).map(\.id) == ["github:2"])
            // Once compacted, the deleted record is in no file at all.
            try await reopened.compact()
            let stored = AccountStoreFiles.fileNames(in: directory).compactMap { FileProbe.bytes(directory + "/" + $0) }
            #expect(!stored.isEmpty && stored.allSatisfy { !String(decoding: $0, as: UTF8.self).contains("github:1") })
            #expect(try await JSONFileAccountRepository(directory: directory).list(provider: nil).map(\.id) == ["github:2"])
        }
    }

    @Test func idTooLongForAFileNameRoundTripsThroughTheStoreAndTheMigrationOfItsDigestNamedFile() async throws {
        let account = Account.make(uid: String(repeating: "\u{E9}", count: 64))
        try await TemporaryDirectory.with { directory in
            try await JSONFileAccountRepository(directory: directory).put(account)
            #expect(try await JSONFileAccountRepository(directory: directory).get(id: account.accountID) == account)
        }
        try await TemporaryDirectory.with { directory in
            try LegacyAccountFiles.write([account], codec: PlainJSONAccountCodec(), in: directory)
            // The previous version named such a record by the digest of its id.
            let name = "~" + Hex.encode(SHA256.hash(Array(account.id.utf8))) + ".json"
            #expect(FileProbe.names(directory + "/accounts") == [name])
            let repository = try JSONFileAccountRepository(directory: directory)
            #expect(repository.migratedAtOpen == 1)
            #expect(try await repository.get(id: account.accountID) == account)
            #expect(LegacyAccountFiles.wasMigrated(directory))
            #expect(try await JSONFileAccountRepository(directory: directory).get(id: account.accountID) == account)
        }
    }

    @Test func aDigestNamedRecordOfAnotherIDStopsTheMigrationAndLeavesTheFormerLayout() async throws {
        try await TemporaryDirectory.with { directory in
            try LegacyAccountFiles.write(
                [Account.make(uid: String(repeating: "/", count: 128)), Account.make(uid: "1")], codec: PlainJSONAccountCodec(),
                in: directory)
            let accounts = directory + "/accounts"
            let digestName = try #require(FileProbe.names(accounts).first { $0.hasPrefix("~") })
            #expect(rename(accounts + "/github%3A1.json", accounts + "/" + digestName) == 0)
            #expect(
                throws: StoreError.corrupt(
                    path: accounts + "/" + digestName,
                    reason: "the file name does not match the account id \"github:1\"")
            ) {
                _ = try JSONFileAccountRepository(directory: directory)
            }
            #expect(FileProbe.names(accounts) == [digestName])
            #expect(AccountStoreFiles.fileNames(in: directory).isEmpty)
        }
    }

    // MARK: Start-up recovery

    @Test func staleTemporaryFilesAreIgnoredAndRemovedOnStart() async throws {
        try await TemporaryDirectory.with { directory in
            let account = Account.make()
            try await JSONFileAccountRepository(directory: directory).put(account)
            let stale = directory + "/" + AccountStoreFormat.snapshotName + ".tmp.00ff00ff00ff00ff"
            try FileProbe.plant("{\"snapshot\":\"token-broker accounts\",\"version\":1,\"journal\":1,\"accounts\":1}\n{\"provid", at: stale)
            try FileProbe.plant("notes", at: directory + "/README.txt")

            let reopened = try JSONFileAccountRepository(directory: directory)
            #expect(try await reopened.list(provider: nil) == [account])
            #expect(!FileManager.default.fileExists(atPath: stale))
            #expect(FileManager.default.fileExists(atPath: directory + "/README.txt"))
        }
    }

    @Test func theMigrationCarriesRecordsOverAndLeavesTemporaryFilesBehind() async throws {
        try await TemporaryDirectory.with { directory in
            let account = Account.make()
            try LegacyAccountFiles.write([account], codec: PlainJSONAccountCodec(), in: directory)
            let accounts = directory + "/accounts"
            try FileProbe.plant("{\"version\": 1, \"provid", at: accounts + "/github%3A1001.json.tmp.00ff00ff00ff00ff")
            try FileProbe.plant("{}", at: accounts + "/github%3A2.json.tmp.0123456789abcdef")
            try FileProbe.plant("notes", at: accounts + "/README.txt")

            let repository = try JSONFileAccountRepository(directory: directory)
            #expect(repository.migratedAtOpen == 1)
            #expect(try await repository.list(provider: nil) == [account])
            #expect(LegacyAccountFiles.wasMigrated(directory))
            #expect(try AccountStoreFiles.ids(in: directory) == [account.id])
            #expect(try await JSONFileAccountRepository(directory: directory).list(provider: nil) == [account])
        }
    }

    @Test func corruptRecordStopsStartAndIsLeftUntouched() async throws {
        try await TemporaryDirectory.with { directory in
            do {
                let repository = try JSONFileAccountRepository(directory: directory)
                try await repository.put(Account.make(uid: "1"))
                try await repository.put(Account.make(uid: "2"))
            }
            try AccountStoreFiles.rewrite(in: directory) { id, record in
                id == "github:2" ? Array(record.prefix(record.count / 2)) : record
            }
            let snapshot = directory + "/" + AccountStoreFormat.snapshotName
            let damaged = try #require(FileProbe.bytes(snapshot))

            #expect {
                _ = try JSONFileAccountRepository(directory: directory)
            } throws: { error in
                guard case .corrupt(let reportedPath, let reason) = error as? StoreError else { return false }
                return reportedPath == snapshot + " line 3" && !reason.contains("gho_access")
            }
            #expect(FileProbe.bytes(snapshot) == damaged)
            #expect(AccountStoreFiles.fileNames(in: directory) == [AccountStoreFormat.snapshotName])
        }
    }

    @Test func recordInTheWrongFileStopsTheMigrationAndLeavesTheFormerLayout() async throws {
        try await TemporaryDirectory.with { directory in
            try LegacyAccountFiles.write([Account.make(uid: "1")], codec: PlainJSONAccountCodec(), in: directory)
            let accounts = directory + "/accounts"
            #expect(rename(accounts + "/github%3A1.json", accounts + "/github%3A9.json") == 0)
            #expect(
                throws: StoreError.corrupt(
                    path: accounts + "/github%3A9.json",
                    reason: "the file name does not match the account id \"github:1\"")
            ) {
                _ = try JSONFileAccountRepository(directory: directory)
            }
            #expect(FileProbe.names(accounts) == ["github%3A9.json"])
            #expect(AccountStoreFiles.fileNames(in: directory).isEmpty)
        }
    }

    // MARK: Failed writes (tests run as root, so permission bits would not stop them)

    @Test func failedWriteLeavesOldRecordAndMemoryUnchanged() async throws {
        try await TemporaryDirectory.with { directory in
            let repository = try JSONFileAccountRepository(directory: directory)
            let original = Account.make(accessToken: "original")
            try await repository.put(original)
            let journal = directory + "/" + AccountStoreFormat.journalName(1)
            let before = try #require(FileProbe.bytes(journal))

            let restore = try FullDisk.fillAccountJournal(in: directory)
            var replacement = original
            replacement.accessToken = Secret("replacement-SENTINEL")
            do throws(StoreError) {
                try await repository.put(replacement)
                Issue.record("put onto a full disk succeeded")
            } catch {
                guard case .unavailable(let message) = error else { Issue.record("expected unavailable, got \(error)"); return }
                #expect(message.contains(journal))
                #expect(!message.contains("SENTINEL"))
            }
            #expect(try await repository.get(id: original.accountID) == original)
            try restore()

            #expect(FileProbe.bytes(journal) == before)
            #expect(try await JSONFileAccountRepository(directory: directory).get(id: original.accountID) == original)
            // With room again, the same write goes through.
            try await repository.put(replacement)
            #expect(try await JSONFileAccountRepository(directory: directory).get(id: original.accountID) == replacement)
        }
    }

    @Test func failedSnapshotRenameRemovesTheTemporaryFileAndKeepsServing() async throws {
        try await TemporaryDirectory.with { directory in
            let repository = try JSONFileAccountRepository(directory: directory)
            try await repository.put(Account.make(uid: "1"))
            // A non-empty directory where the snapshot should go makes rename(2) fail with EISDIR, even for root.
            let blocked = directory + "/" + AccountStoreFormat.snapshotName
            #expect(mkdir(blocked, 0o700) == 0)
            try FileProbe.plant("x", at: blocked + "/inside")

            await #expect(throws: StoreError.self) { try await repository.compact() }
            #expect(!FileProbe.names(directory).contains { $0.contains(".tmp.") })
            try await repository.put(Account.make(uid: "2"))
            #expect(try await repository.list(provider: nil).map(\.id) == ["github:1", "github:2"])

            #expect(unlink(blocked + "/inside") == 0 && rmdir(blocked) == 0)
            try await repository.compact()
            #expect(try await JSONFileAccountRepository(directory: directory).list(provider: nil).map(\.id) == ["github:1", "github:2"])
        }
    }
}
