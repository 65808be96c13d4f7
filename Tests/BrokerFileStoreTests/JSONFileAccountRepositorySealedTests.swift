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

    /// Writes `accounts` as record files of the former layout with `codec`, as the previous version left them.
    private static func plant(_ accounts: [Account], codec: some AccountRecordCodec, in directory: String) throws {
        try LegacyAccountFiles.write(accounts, codec: codec, in: directory)
    }

    @Test func secretsStaySealedUntilReadThenStayOpen() async throws {
        try await TemporaryDirectory.with { directory in
            let codec = try EncryptedRecordFixtures.codec(keyA)
            let accounts = (1...5).map { Account.make(uid: "\($0)") } + [.makeFull()]
            try Self.plant(accounts, codec: codec, in: directory)
            let repository = try JSONFileAccountRepository(directory: directory, codec: codec, openSealedInBackground: false)
            #expect(repository.migratedAtOpen == accounts.count)
            #expect(LegacyAccountFiles.wasMigrated(directory))
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
            #expect(repository.migratedAtOpen == 40)
            #expect(Self.sealedCount(repository) == 39)
            let newer = Account.make(uid: "7", accessToken: "rotated-token")
            try await repository.put(newer)
            #expect(repository.openSealedAccounts().isEmpty)
            #expect(Self.sealedCount(repository) == 0)
            #expect(try await repository.get(id: "github:7") == newer)
            #expect(try await repository.get(id: "github:8") == .make(uid: "8"))
            // The default opens in the background by itself.
            let reopened = try JSONFileAccountRepository(directory: directory, codec: codec)
            #expect(await eventually { Self.sealedCount(reopened) == 0 })
            #expect(try await reopened.get(id: "github:7") == newer)
        }
    }

    @Test func tamperedRecordFailsEveryReadNamingItAndIsNeverOverwritten() async throws {
        try await TemporaryDirectory.with { directory in
            let codec = try EncryptedRecordFixtures.codec(keyA)
            do {
                let writer = try JSONFileAccountRepository(directory: directory, codec: codec)
                for uid in ["1", "2", "3"] { try await writer.put(.make(uid: uid)) }
            }
            try AccountStoreFiles.rewrite(in: directory) { id, record in
                guard id == "github:2" else { return record }
                return try EncryptedRecordFixtures.flip(record, field: "access_token", part: "ct") { $0 / 2 }
            }
            let snapshot = directory + "/" + AccountStoreFormat.snapshotName
            let tampered = try #require(FileProbe.bytes(snapshot))
            let expected = StoreError.corrupt(
                path: AccountStorePlaces.account("github:2", in: directory),
                reason: "cannot decrypt access_token with key \"\(codec.keyring.current.id)\": wrong key or tampered data")

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
            #expect(FileProbe.bytes(snapshot) == tampered)
            #expect(FileProbe.bytes(directory + "/" + AccountStoreFormat.journalName(1))?.isEmpty == true)
            #expect("\(expected)".contains("nothing was overwritten"))
        }
    }

    @Test func snapshotRecordChangedOnDiskAfterStartIsRefusedWhenOpenedNeverServed() async throws {
        try await TemporaryDirectory.with { directory in
            let codec = try EncryptedRecordFixtures.codec(keyA)
            do {
                let writer = try JSONFileAccountRepository(directory: directory, codec: codec)
                for uid in ["1", "2", "3", "4"] { try await writer.put(.make(uid: uid)) }
            }
            // Into one snapshot: start-up leaves the envelopes of its records in the file until they are opened.
            try AccountStoreFiles.rewrite(in: directory) { _, record in record }
            let snapshot = directory + "/" + AccountStoreFormat.snapshotName
            let records = try AccountStoreFiles.records(in: directory)
            let repository = try JSONFileAccountRepository(directory: directory, codec: codec, openSealedInBackground: false)
            #expect(Self.sealedCount(repository) == 3)

            // Then, in place (the file the store holds open): github:2's ciphertext altered, and github:3's record
            // replaced by a plaintext one of the same length carrying a token of the forger's choice.
            let tampered = try EncryptedRecordFixtures.flip(try #require(records["github:2"]), field: "access_token", part: "ct") { $0 / 2 }
            var forged = try JSONLine.compact(PlainJSONAccountCodec().encode(.make(uid: "3", accessToken: "forged-token")))
            let sealed3 = try #require(records["github:3"])
            try #require(tampered.count == records["github:2"]!.count && forged.count < sealed3.count)
            forged.insert(contentsOf: [UInt8](repeating: UInt8(ascii: " "), count: sealed3.count - forged.count), at: forged.count - 1)
            var bytes = try #require(FileProbe.bytes(snapshot))
            for (original, replacement) in [(records["github:2"]!, tampered), (sealed3, forged)] {
                let start = try #require(bytes.firstRange(of: original)).lowerBound
                bytes.replaceSubrange(start..<(start + original.count), with: replacement)
            }
            let descriptor = open(snapshot, O_WRONLY)
            try #require(descriptor >= 0)
            try #require(bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) } == bytes.count)
            close(descriptor)

            let decrypting = StoreError.corrupt(
                path: AccountStorePlaces.account("github:2", in: directory),
                reason: "cannot decrypt access_token with key \"\(codec.keyring.current.id)\": wrong key or tampered data")
            await #expect(throws: decrypting) { _ = try await repository.get(id: "github:2") }
            await #expect {
                _ = try await repository.get(id: "github:3")
            } throws: { error in
                guard case .corrupt(let path, _)? = error as? StoreError else { return false }
                return path == AccountStorePlaces.account("github:3", in: directory)
            }
            #expect(repository.getNow(id: "github:3") == nil)
            #expect(repository.damagedRecordCount == 2)
            #expect(try await repository.get(id: "github:4") == .make(uid: "4"))
        }
    }

    @Test func wrongKeyForAnyKeyIDStopsStartNamingTheFirstRecordSealedWithIt() async throws {
        try await TemporaryDirectory.with { directory in
            // a… is sealed with the current key k2, b… and c… with the older k1, by the previous version.
            try Self.plant([.make(provider: "a")], codec: try EncryptedRecordFixtures.codec("k2:\(keyA)"), in: directory)
            try Self.plant(
                [.make(provider: "b"), .make(provider: "c")], codec: try EncryptedRecordFixtures.codec("k1:\(keyB)"), in: directory)
            let planted = try AccountStoreFiles.records(in: directory).mapValues(JSONLine.compact)
            let wrong = try EncryptedRecordFixtures.codec("k2:\(keyA),k1:\(EncryptedRecordFixtures.keyText())")
            // The migration copies records without opening them; the key is found wrong on the migrated b:1001.
            #expect {
                _ = try JSONFileAccountRepository(directory: directory, codec: wrong)
            } throws: { error in
                let path = AccountStorePlaces.line(3, of: AccountStoreFormat.snapshotName, in: directory)
                return error as? StoreError
                    == .corrupt(path: path, reason: "cannot decrypt access_token with key \"k1\": wrong key or tampered data")
            }
            #expect(LegacyAccountFiles.wasMigrated(directory))
            #expect(try AccountStoreFiles.records(in: directory) == planted)
            let right = try JSONFileAccountRepository(
                directory: directory, codec: try EncryptedRecordFixtures.codec("k2:\(keyA),k1:\(keyB)"))
            #expect(try await right.list(provider: nil).map(\.provider) == ["a", "b", "c"])
        }
    }

    @Test func manyRecordsMigrateAcrossReadBatchesLeavingTemporariesBehindAndTheFirstBadFileStopsIt() async throws {
        let codec = try EncryptedRecordFixtures.codec(keyA)
        // More than two of the migration's read batches (1,024 files each).
        let accounts = (0..<(1024 * 2 + 300)).map { Account.make(uid: String(format: "%05d", $0)) }
        try await TemporaryDirectory.with { directory in
            // Seconds of file writing and decoding: off Swift's cooperative threads, which every other suite shares.
            try await offPool { try Self.plant(accounts, codec: codec, in: directory) }
            let legacy = directory + "/accounts"
            try FileProbe.plant("torn", at: legacy + "/github%3A00001.json.tmp.0123456789abcdef")
            try FileProbe.plant("notes", at: legacy + "/README")

            let repository = try await offPool {
                try JSONFileAccountRepository(directory: directory, codec: codec, openSealedInBackground: false)
            }
            #expect(repository.migratedAtOpen == accounts.count)
            #expect(try await repository.list(provider: nil) == accounts)
            #expect(LegacyAccountFiles.wasMigrated(directory))
            #expect(FileProbe.names(directory + "/accounts.migrated").count == accounts.count + 2)
        }
        try await TemporaryDirectory.with { directory in
            try await offPool { try Self.plant(accounts, codec: codec, in: directory) }
            let legacy = directory + "/accounts"
            for uid in ["02000", "00700", "01500"] {
                try FileProbe.plant("{\"version\": 1", at: legacy + "/github%3A\(uid).json")
            }
            #expect(
                throws: StoreError.corrupt(path: legacy + "/github%3A00700.json", reason: "not valid JSON (truncated or damaged)")
            ) {
                _ = try JSONFileAccountRepository(directory: directory, codec: codec)
            }
            // Nothing was migrated: the former layout is as it was, and still the one to read.
            #expect(AccountStoreFiles.fileNames(in: directory).isEmpty)
            #expect(FileProbe.names(legacy).count == accounts.count)
        }
    }
}
