import BrokerTestSupport
import Foundation
import Glibc
import Testing

@testable import BrokerCore
@testable import BrokerFileStore

/// The encrypted file store opens sealed secrets on first use, yet a wrong key still stops start-up and a tampered record never reads as garbage.
struct JSONFileAccountRepositorySealedTests {
    private let keyA = EncryptedRecordFixtures.keyText()
    private let keyB = EncryptedRecordFixtures.keyText()

    /// How many accounts in memory still have sealed secrets.
    private static func sealedCount(_ repository: JSONFileAccountRepository) -> Int {
        repository.index.withLock { $0.sealedIDs.count }
    }

    /// Writes `accounts` as record files with `codec`, without the repository (and without fsync), as an earlier run left them.
    private static func plant(_ accounts: [Account], codec: some AccountRecordCodec, in directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory + "/accounts", withIntermediateDirectories: true)
        for account in accounts {
            let name = try #require(StoreFileName.forAccount(id: account.id))
            try Data(codec.encode(account)).write(to: URL(fileURLWithPath: directory + "/accounts/" + name))
        }
    }

    @Test func secretsStaySealedUntilReadThenStayOpen() async throws {
        try await TemporaryDirectory.with { directory in
            let codec = try EncryptedRecordFixtures.codec(keyA)
            let accounts = (1...5).map { Account.make(uid: "\($0)") } + [.makeFull()]
            try Self.plant(accounts, codec: codec, in: directory)
            let repository = try JSONFileAccountRepository(directory: directory, codec: codec, openSealedInBackground: false)
            // One record per key id is opened at start-up to prove the key; the rest wait.
            #expect(Self.sealedCount(repository) == accounts.count - 1)
            #expect(try await repository.get(id: "github:3") == accounts[2])
            #expect(Self.sealedCount(repository) == accounts.count - 2)
            #expect(repository.getNow(id: "twitter:783214") == .makeFull())
            #expect(try await repository.list(provider: "github") == Array(accounts.prefix(5)))
            #expect(Self.sealedCount(repository) == 0)
            #expect(try await repository.list(provider: nil) == accounts.sortedByID())
        }
    }

    @Test func backgroundPassOpensEverythingAndAWriteWinsOverAStaleOpening() async throws {
        try await TemporaryDirectory.with { directory in
            let codec = try EncryptedRecordFixtures.codec(keyA)
            try Self.plant((1...40).map { Account.make(uid: "\($0)") }, codec: codec, in: directory)
            let repository = try JSONFileAccountRepository(directory: directory, codec: codec, openSealedInBackground: false)
            #expect(Self.sealedCount(repository) == 39)
            let newer = Account.make(uid: "7", accessToken: "rotated-token")
            try await repository.put(newer)
            #expect(repository.openSealedAccounts().isEmpty)
            #expect(Self.sealedCount(repository) == 0)
            #expect(try await repository.get(id: "github:7") == newer)
            #expect(try await repository.get(id: "github:8") == .make(uid: "8"))
            // The default opens in the background by itself.
            let reopened = try JSONFileAccountRepository(directory: directory, codec: codec)
            #expect(await eventually(timeout: 5) { Self.sealedCount(reopened) == 0 })
            #expect(try await reopened.get(id: "github:7") == newer)
        }
    }

    @Test func tamperedRecordFailsEveryReadNamingTheFileAndIsNeverOverwritten() async throws {
        try await TemporaryDirectory.with { directory in
            let codec = try EncryptedRecordFixtures.codec(keyA)
            try Self.plant([.make(uid: "1"), .make(uid: "2"), .make(uid: "3")], codec: codec, in: directory)
            let path = directory + "/accounts/github%3A2.json"
            let tampered = try EncryptedRecordFixtures.flip(try #require(FileProbe.bytes(path)), field: "access_token", part: "ct") {
                $0 / 2
            }
            try Data(tampered).write(to: URL(fileURLWithPath: path))
            let expected = StoreError.corrupt(
                path: path, reason: "cannot decrypt access_token with key \"\(codec.keyring.current.id)\": wrong key or tampered data")

            // github:1 proves the key at start-up; the tampered github:2 is found when it is read.
            let repository = try JSONFileAccountRepository(directory: directory, codec: codec, openSealedInBackground: false)
            await #expect(throws: expected) { _ = try await repository.get(id: "github:2") }
            #expect(repository.getNow(id: "github:2") == nil)
            await #expect(throws: expected) { _ = try await repository.list(provider: nil) }
            await #expect(throws: expected) {
                _ = try await repository.update(id: "github:2") { _ in .make(uid: "2", accessToken: "replacement") }
            }
            await #expect(throws: expected) { _ = try await repository.delete(id: "github:2") }
            #expect(try await repository.get(id: "github:3") == .make(uid: "3"))
            #expect(repository.openSealedAccounts() == [expected])
            await #expect(throws: expected) { _ = try await repository.get(id: "github:2") }
            #expect(FileProbe.bytes(path) == tampered)
            #expect("\(expected)".contains("nothing was overwritten"))
        }
    }

    @Test func wrongKeyForAnyKeyIDStopsStartNamingTheFirstFileSealedWithIt() async throws {
        try await TemporaryDirectory.with { directory in
            // a… is sealed with the current key k2, b… and c… with the older k1.
            try Self.plant([.make(provider: "a")], codec: try EncryptedRecordFixtures.codec("k2:\(keyA)"), in: directory)
            try Self.plant(
                [.make(provider: "b"), .make(provider: "c")], codec: try EncryptedRecordFixtures.codec("k1:\(keyB)"), in: directory)
            let before = FileProbe.names(directory + "/accounts").map { FileProbe.bytes(directory + "/accounts/" + $0) }
            let wrong = try EncryptedRecordFixtures.codec("k2:\(keyA),k1:\(EncryptedRecordFixtures.keyText())")
            #expect(
                throws: StoreError.corrupt(
                    path: directory + "/accounts/b%3A1001.json",
                    reason: "cannot decrypt access_token with key \"k1\": wrong key or tampered data")
            ) {
                _ = try JSONFileAccountRepository(directory: directory, codec: wrong)
            }
            #expect(FileProbe.names(directory + "/accounts").map { FileProbe.bytes(directory + "/accounts/" + $0) } == before)
            let right = try JSONFileAccountRepository(
                directory: directory, codec: try EncryptedRecordFixtures.codec("k2:\(keyA),k1:\(keyB)"))
            #expect(try await right.list(provider: nil).map(\.provider) == ["a", "b", "c"])
        }
    }

    @Test func startUpLeavesAccessTimesAlone() async throws {
        try await TemporaryDirectory.with { directory in
            try Self.plant([.make(uid: "1")], codec: PlainJSONAccountCodec(), in: directory)
            let path = directory + "/accounts/github%3A1.json"
            // An access time before the modification time: under relatime (the usual mount) a read would update it.
            var times = [timespec(tv_sec: 1_000_000_000, tv_nsec: 0), timespec(tv_sec: 1_500_000_000, tv_nsec: 0)]
            #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
            _ = try JSONFileAccountRepository(directory: directory)
            var status = stat()
            #expect(stat(path, &status) == 0)
            #expect(status.st_atim.tv_sec == 1_000_000_000)
        }
    }

    @Test func manyRecordsLoadAcrossListingBatchesWithTemporariesRemovedAndTheFirstBadFileNamed() async throws {
        try await TemporaryDirectory.with { directory in
            let codec = try EncryptedRecordFixtures.codec(keyA)
            let count = AccountDirectoryLoader.batchSize * 2 + 300
            let accounts = (0..<count).map { Account.make(uid: String(format: "%05d", $0)) }
            try Self.plant(accounts, codec: codec, in: directory)
            let accountsDirectory = directory + "/accounts"
            try FileProbe.plant("torn", at: accountsDirectory + "/github%3A00001.json.tmp.0123456789abcdef")
            try FileProbe.plant("notes", at: accountsDirectory + "/README")

            let repository = try JSONFileAccountRepository(directory: directory, codec: codec, openSealedInBackground: false)
            #expect(try await repository.list(provider: nil) == accounts)
            #expect(!FileManager.default.fileExists(atPath: accountsDirectory + "/github%3A00001.json.tmp.0123456789abcdef"))
            #expect(FileManager.default.fileExists(atPath: accountsDirectory + "/README"))

            for uid in ["02000", "00700", "01500"] {
                try FileProbe.plant("{\"version\": 1", at: accountsDirectory + "/github%3A\(uid).json")
            }
            #expect(
                throws: StoreError.corrupt(
                    path: accountsDirectory + "/github%3A00700.json", reason: "not valid JSON (truncated or damaged)")
            ) {
                _ = try JSONFileAccountRepository(directory: directory, codec: codec)
            }
        }
    }
}
