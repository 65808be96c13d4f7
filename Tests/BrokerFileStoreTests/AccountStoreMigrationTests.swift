import BrokerCore
import BrokerCrypto
import BrokerFileStore
import BrokerTestSupport
import Foundation
import Glibc
import Testing

/// A data directory the previous version wrote (one file per account) moves to the snapshot and journal, atomically.
///
/// `scripts/crash-safety` migrates a copy of a 100,000-account directory with a release build, killing it mid-way.
struct AccountStoreMigrationTests {
    private static let key = "k1:" + Base64.encode((0..<32).map { UInt8($0 &* 7) })
    private func codec() throws -> EncryptedAccountCodec {
        EncryptedAccountCodec(keyring: try EncryptionKeyring.parse(Self.key, source: "test"))
    }

    /// Accounts of every shape the former file names had to handle: plain, Unicode, long enough for a digest name.
    private static func accounts(_ count: Int) -> [Account] {
        var accounts = (0..<count).map { Account.make(uid: String($0), accessToken: "token-\($0)") }
        accounts.append(.make(provider: "twitter", uid: "café/ \"q\" \\ 🙂", accessToken: "unicode"))
        accounts.append(.make(uid: String(repeating: "é", count: 120), accessToken: "digest-named"))
        accounts.append(.makeFull())
        return accounts
    }

    /// The names and bytes of every file under `directory`, to show a directory was left exactly as it was.
    private func contents(_ directory: String) -> [String: [UInt8]] {
        var result: [String: [UInt8]] = [:]
        for name in FileProbe.names(directory) { result[name] = FileProbe.bytes(directory + "/" + name) }
        return result
    }

    @Test func aCopyOfAFiveThousandAccountDirectoryMigratesAndEveryAccountReadsTheSame() async throws {
        try await TemporaryDirectory.with { root in
            let accounts = Self.accounts(5_000)
            let original = root + "/original"
            let copy = root + "/copy"
            let codec = try codec()
            // Seconds of file writing and decoding: off Swift's cooperative threads, which every other suite shares.
            let (legacy, repository) = try await offPool { () throws -> (String, JSONFileAccountRepository) in
                let legacy = try LegacyAccountFiles.write(accounts, codec: codec, in: original)
                try FileManager.default.copyItem(atPath: original, toPath: copy)
                return (legacy, try JSONFileAccountRepository(directory: copy, codec: codec, openSealedInBackground: false))
            }
            #expect(repository.migratedAtOpen == accounts.count)
            #expect(!FileManager.default.fileExists(atPath: copy + "/accounts"))
            // The former directory is kept, whole, for a rollback.
            #expect(FileProbe.names(copy + "/accounts.migrated").count == accounts.count)
            #expect(AccountStoreFiles.fileNames(in: copy).contains(AccountStoreFormat.snapshotName))
            #expect(FileProbe.mode(copy + "/" + AccountStoreFormat.snapshotName) == 0o600)
            let stored = try await repository.list(provider: nil)
            #expect(stored.count == accounts.count)
            let expected = try accounts.map { try codec.stored($0, path: "") }
                .sorted { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
            #expect(stored == expected)

            // A second start reads the snapshot and migrates nothing.
            let reopened = try await offPool { try JSONFileAccountRepository(directory: copy, codec: codec) }
            #expect(reopened.migratedAtOpen == nil)
            #expect(try await reopened.get(id: "github:4999")?.accessToken.value == "token-4999")
            #expect(FileProbe.names(legacy).count == accounts.count)
        }
    }

    @Test func aMigrationThatFailsLeavesTheFormerLayoutAsItWas() async throws {
        try await TemporaryDirectory.with { root in
            let directory = root + "/data"
            let legacy = try LegacyAccountFiles.write(Self.accounts(200), codec: codec(), in: directory)
            try FileProbe.plant("{\"version\": 1", at: legacy + "/github%3A99.json")
            let before = contents(legacy)
            #expect {
                _ = try JSONFileAccountRepository(directory: directory, codec: codec())
            } throws: { error in
                guard case .corrupt(let path, _) = error as? StoreError else { return false }
                return path == legacy + "/github%3A99.json"
            }
            #expect(contents(legacy) == before)
            #expect(AccountStoreFiles.fileNames(in: directory).isEmpty)
        }
    }

    /// The two moments a kill can leave behind: the snapshot half written (a temporary), or written but `accounts/` not yet moved.
    @Test func aMigrationKilledAtEitherStepIsFinishedByTheNextStart() async throws {
        try await TemporaryDirectory.with { root in
            let accounts = Self.accounts(300)
            let expected = try accounts.map { try codec().stored($0, path: "") }.sorted { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }

            let whileWriting = root + "/while-writing"
            try LegacyAccountFiles.write(accounts, codec: codec(), in: whileWriting)
            try FileProbe.plant("{\"snapshot\":\"token-broker accou", at: whileWriting + "/accounts.snapshot.jsonl.tmp.00000000000000aa")

            let beforeMove = root + "/before-move"
            try LegacyAccountFiles.write(accounts, codec: codec(), in: beforeMove)
            _ = try JSONFileAccountRepository(directory: beforeMove, codec: codec())
            // Back to the moment after the snapshot's rename: the former directory still in place, no journal yet.
            #expect(rename(beforeMove + "/accounts.migrated", beforeMove + "/accounts") == 0)
            for name in AccountStoreFiles.fileNames(in: beforeMove) where name.hasPrefix("accounts.journal.") {
                #expect(unlink(beforeMove + "/" + name) == 0)
            }

            for directory in [whileWriting, beforeMove] {
                let repository = try JSONFileAccountRepository(directory: directory, codec: codec())
                #expect(try await repository.list(provider: nil) == expected, "\(directory)")
                #expect(!FileManager.default.fileExists(atPath: directory + "/accounts"), "\(directory)")
                #expect(!AccountStoreFiles.fileNames(in: directory).contains { $0.contains(".tmp.") }, "\(directory)")
            }
        }
    }
}
