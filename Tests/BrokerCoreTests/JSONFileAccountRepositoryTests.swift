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
                            _ = try await repository.delete(id: Account.make(uid: String(Int.random(in: 0..<40, using: &generator))).id)
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

    @Test func filesAre0600AndDirectories0700EvenIfTheDataDirectoryExisted() async throws {
        try await TemporaryDirectory.with { directory in
            let data = directory + "/data"
            #expect(mkdir(data, 0o755) == 0)
            let repository = try JSONFileAccountRepository(directory: data)
            let account = Account.make()
            try await repository.put(account)
            let file = repository.accountsDirectory + "/github%3A1001.json"
            #expect(FileProbe.mode(file) == 0o600)
            #expect(chmod(file, 0o644) == 0)
            try await repository.put(Account.make(accessToken: "rotated"))
            #expect(FileProbe.mode(file) == 0o600)
            #expect(FileProbe.mode(repository.accountsDirectory) == 0o700)
            #expect(FileProbe.mode(data) == 0o700)
            #expect(FileProbe.names(repository.accountsDirectory) == ["github%3A1001.json"])
        }
    }

    @Test func recordIsReadableJSONWithVersionAndUTCDates() async throws {
        try await TemporaryDirectory.with { directory in
            let repository = try JSONFileAccountRepository(directory: directory)
            try await repository.put(Account.make())
            let bytes = try #require(FileProbe.bytes(repository.accountsDirectory + "/github%3A1001.json"))
            let json = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
            #expect(json["version"] as? Int == 1)
            #expect(json["id"] as? String == "github:1001")
            #expect(json["created_at"] as? String == "2026-11-30T08:00:00Z")
            #expect(String(decoding: bytes, as: UTF8.self).contains("\n  \"access_token\""))
        }
    }

    @Test func idsWithUnsafeCharactersMapToSafeDistinctFiles() async throws {
        try await TemporaryDirectory.with { directory in
            let repository = try JSONFileAccountRepository(directory: directory)
            let tricky = ["../../etc/passwd", "a/b", "a%2Fb", "x.tmp.0123456789abcdef", "ü ñ", ".."]
            let accounts = tricky.map { Account.make(provider: "weird", uid: $0) }
            for account in accounts { try await repository.put(account) }
            let names = FileProbe.names(repository.accountsDirectory)
            #expect(names.count == tricky.count)
            #expect(names.allSatisfy { !$0.contains("/") && $0.hasSuffix(".json") })
            let reopened = try JSONFileAccountRepository(directory: directory)
            #expect(try await reopened.list(provider: "weird") == accounts.sortedByID())
        }
    }

    @Test func deleteRemovesTheFile() async throws {
        try await TemporaryDirectory.with { directory in
            let repository = try JSONFileAccountRepository(directory: directory)
            try await repository.put(Account.make(uid: "1"))
            try await repository.put(Account.make(uid: "2"))
            _ = try await repository.delete(id: "github:1")
            #expect(FileProbe.names(repository.accountsDirectory) == ["github%3A2.json"])
        }
    }

    @Test func idTooLongToEscapeIsStoredUnderItsDigest() async throws {
        try await TemporaryDirectory.with { directory in
            let repository = try JSONFileAccountRepository(directory: directory)
            let account = Account.make(uid: String(repeating: "\u{E9}", count: 64))
            try await repository.put(account)
            let name = "~" + Hex.encode(SHA256.hash(Array(account.id.utf8))) + ".json"
            #expect(FileProbe.names(repository.accountsDirectory) == [name])
            #expect(try await JSONFileAccountRepository(directory: directory).get(id: account.id) == account)
        }
    }

    @Test func aDigestNamedRecordOfAnotherIDIsCorrupt() async throws {
        try await TemporaryDirectory.with { directory in
            let repository = try JSONFileAccountRepository(directory: directory)
            let long = Account.make(uid: String(repeating: "/", count: 128))
            try await repository.put(long)
            try await repository.put(Account.make(uid: "1"))
            let accounts = repository.accountsDirectory
            let digestName = try #require(FileProbe.names(accounts).first { $0.hasPrefix("~") })
            #expect(rename(accounts + "/github%3A1.json", accounts + "/" + digestName) == 0)
            #expect(
                throws: StoreError.corrupt(
                    path: accounts + "/" + digestName,
                    reason: "the file name does not match the account id \"github:1\"")
            ) {
                _ = try JSONFileAccountRepository(directory: directory)
            }
        }
    }

    // MARK: Start-up recovery

    @Test func staleTemporaryFilesAreIgnoredAndRemovedOnStart() async throws {
        try await TemporaryDirectory.with { directory in
            let account = Account.make()
            try await JSONFileAccountRepository(directory: directory).put(account)
            let accounts = directory + "/accounts"
            try FileProbe.plant("{\"version\": 1, \"provid", at: accounts + "/github%3A1001.json.tmp.00ff00ff00ff00ff")
            try FileProbe.plant("{}", at: accounts + "/github%3A2.json.tmp.0123456789abcdef")
            try FileProbe.plant("notes", at: accounts + "/README.txt")

            let reopened = try JSONFileAccountRepository(directory: directory)
            #expect(try await reopened.list(provider: nil) == [account])
            #expect(FileProbe.names(accounts) == ["README.txt", "github%3A1001.json"])
        }
    }

    @Test func corruptRecordStopsStartAndIsLeftUntouched() async throws {
        try await TemporaryDirectory.with { directory in
            let repository = try JSONFileAccountRepository(directory: directory)
            try await repository.put(Account.make(uid: "1"))
            try await repository.put(Account.make(uid: "2"))
            let path = repository.accountsDirectory + "/github%3A2.json"
            let whole = try #require(FileProbe.bytes(path))
            let truncated = Array(whole.prefix(whole.count / 2))
            try Data(truncated).write(to: URL(fileURLWithPath: path))

            #expect {
                _ = try JSONFileAccountRepository(directory: directory)
            } throws: { error in
                guard case .corrupt(let reportedPath, let reason) = error as? StoreError else { return false }
                return reportedPath == path && !reason.contains("gho_access")
            }
            #expect(FileProbe.bytes(path) == truncated)
            #expect(FileProbe.names(repository.accountsDirectory) == ["github%3A1.json", "github%3A2.json"])
        }
    }

    @Test func recordInTheWrongFileIsCorrupt() async throws {
        try await TemporaryDirectory.with { directory in
            let repository = try JSONFileAccountRepository(directory: directory)
            try await repository.put(Account.make(uid: "1"))
            let accounts = repository.accountsDirectory
            #expect(rename(accounts + "/github%3A1.json", accounts + "/github%3A9.json") == 0)
            #expect(
                throws: StoreError.corrupt(
                    path: accounts + "/github%3A9.json",
                    reason: "the file name does not match the account id \"github:1\"")
            ) {
                _ = try JSONFileAccountRepository(directory: directory)
            }
        }
    }

    // MARK: Failed writes (tests run as root, so permission bits would not stop them)

    @Test func failedWriteLeavesOldRecordAndMemoryUnchanged() async throws {
        try await TemporaryDirectory.with { directory in
            let repository = try JSONFileAccountRepository(directory: directory)
            let original = Account.make(accessToken: "original")
            try await repository.put(original)
            let accounts = repository.accountsDirectory
            let file = accounts + "/github%3A1001.json"
            let before = try #require(FileProbe.bytes(file))

            // Swap the accounts directory for a regular file: every create in it fails with ENOTDIR.
            #expect(rename(accounts, directory + "/moved") == 0)
            try FileProbe.plant("not a directory", at: accounts)
            var replacement = original
            replacement.accessToken = Secret("replacement-SENTINEL")
            do throws(StoreError) {
                try await repository.put(replacement)
                Issue.record("put into a broken directory succeeded")
            } catch {
                guard case .unavailable(let message) = error else { Issue.record("expected unavailable, got \(error)"); return }
                #expect(message.contains(accounts))
                #expect(!message.contains("SENTINEL"))
            }
            #expect(try await repository.get(id: original.id) == original)

            #expect(unlink(accounts) == 0)
            #expect(rename(directory + "/moved", accounts) == 0)
            #expect(FileProbe.bytes(file) == before)
            #expect(FileProbe.names(accounts) == ["github%3A1001.json"])
            #expect(try await JSONFileAccountRepository(directory: directory).get(id: original.id) == original)
        }
    }

    @Test func failedRenameRemovesTheTemporaryFile() async throws {
        try await TemporaryDirectory.with { directory in
            let repository = try JSONFileAccountRepository(directory: directory)
            try await repository.put(Account.make(uid: "1"))
            // A non-empty directory where the record should go makes rename(2) fail with EISDIR, even for root.
            let blocked = repository.accountsDirectory + "/github%3A2.json"
            #expect(mkdir(blocked, 0o700) == 0)
            try FileProbe.plant("x", at: blocked + "/inside")

            await #expect(throws: StoreError.self) { try await repository.put(Account.make(uid: "2")) }
            #expect(try await repository.get(id: "github:2") == nil)
            #expect(try await repository.list(provider: nil).map(\.id) == ["github:1"])
            #expect(FileProbe.names(repository.accountsDirectory) == ["github%3A1.json", "github%3A2.json"])
        }
    }
}
