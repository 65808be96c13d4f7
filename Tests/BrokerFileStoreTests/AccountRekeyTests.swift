import BrokerCore
import BrokerFileStore
import BrokerTestSupport
import Foundation
import Testing

/// Key rotation: older keys still open records, writes and `rekey` move them to the current key.
struct AccountRekeyTests {
    private let keyA = EncryptedRecordFixtures.keyText()
    private let keyB = EncryptedRecordFixtures.keyText()
    private let accounts = [Account.make(uid: "1"), Account.make(uid: "2"), Account.make(uid: "3"), Account.makeFull()]

    /// The key ids of every sealed field in the latest stored record of every account of `repository`, by account id.
    private func kids(_ repository: JSONFileAccountRepository) throws -> [String: [String]] {
        try AccountStoreFiles.records(in: repository.dataDirectory).mapValues(EncryptedRecordFixtures.kids)
    }

    /// A store under `directory` holding ``accounts`` written with `codec`.
    private func seed(_ directory: String, codec: some AccountRecordCodec) async throws {
        let repository = try JSONFileAccountRepository(directory: directory, codec: codec)
        for account in accounts { try await repository.put(account) }
    }

    @Test func rotationReadsOldRecordsReencryptsOnWriteAndRekeyFinishesTheJob() async throws {
        try await TemporaryDirectory.with { directory in
            try await seed(directory, codec: EncryptedRecordFixtures.codec("a:\(keyA)"))
            // With only the new key, the old records cannot be opened.
            #expect(throws: StoreError.self) {
                _ = try JSONFileAccountRepository(directory: directory, codec: EncryptedRecordFixtures.codec("b:\(keyB)"))
            }

            let rotated = try EncryptedRecordFixtures.codec("b:\(keyB),a:\(keyA)")
            let repository = try JSONFileAccountRepository(directory: directory, codec: rotated)
            #expect(try await repository.list(provider: nil) == accounts.sortedByID())
            var changed = Account.make(uid: "2", accessToken: "rotated-token")
            changed.updatedAt = Date.fixture.addingTimeInterval(60)
            try await repository.put(changed)
            #expect(try kids(repository)["github:2"] == ["b"])
            #expect(try kids(repository)["github:1"] == ["a"])

            let result = try await repository.rekey(codec: rotated)
            #expect(result.rewritten == 3 && result.total == 4)
            #expect(try kids(repository).values.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0 == "b" } })
            #expect(try await repository.rekey(codec: rotated) == (rewritten: 0, total: 4))

            let onlyNew = try JSONFileAccountRepository(directory: directory, codec: EncryptedRecordFixtures.codec("b:\(keyB)"))
            let expected = accounts.map { $0.id == changed.id ? changed : $0 }.sortedByID()
            #expect(try await onlyNew.list(provider: nil) == expected)
            #expect(try await repository.list(provider: nil) == expected)
        }
    }

    /// A store from before encryption at rest is sealed at its first start with a key, and left with no secret in plaintext.
    @Test func plaintextRecordsOfAnEarlierVersionAreSealedAtTheFirstStart() async throws {
        try await TemporaryDirectory.with { directory in
            try await seed(directory, codec: PlainJSONAccountCodec())
            let sentinels = ["access-SENTINEL-1", "refresh-SENTINEL-2", "secret-SENTINEL-3", "gho_access_github_1"]
            #expect(!Set(try EncryptedRecordFixtures.scan(directory, for: sentinels).values.flatMap { $0 }).isEmpty)

            let codec = try EncryptedRecordFixtures.codec("k1:\(keyA)")
            let repository = try JSONFileAccountRepository(directory: directory, codec: codec)
            #expect(repository.sealedAtOpen == 4)
            #expect(try await repository.list(provider: nil) == accounts.sortedByID())
            #expect(try kids(repository).values.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0 == "k1" } })
            #expect(try EncryptedRecordFixtures.scan(directory, for: sentinels).values.allSatisfy { $0.isEmpty })
            #expect(try await repository.rekey(codec: codec) == (rewritten: 0, total: 4))
            #expect(try await JSONFileAccountRepository(directory: directory, codec: codec).list(provider: nil) == accounts.sortedByID())
        }
    }

    @Test func rekeyThroughARepositoryWithAnotherCodecFailsInsteadOfClaimingSuccess() async throws {
        try await TemporaryDirectory.with { directory in
            try await seed(directory, codec: PlainJSONAccountCodec())
            let plain = try JSONFileAccountRepository(directory: directory)
            await #expect(throws: StoreError.self) { _ = try await plain.rekey(codec: EncryptedRecordFixtures.codec(keyA)) }
        }
    }

    @Test func genericRunRewritesEveryAccountThroughPut() async throws {
        try await TemporaryDirectory.with { directory in
            try await seed(directory, codec: EncryptedRecordFixtures.codec("a:\(keyA)"))
            let repository = try JSONFileAccountRepository(
                directory: directory, codec: EncryptedRecordFixtures.codec("b:\(keyB),a:\(keyA)"))
            #expect(try await AccountRekey.run(repository: repository, concurrency: 2) == accounts.count)
            #expect(try kids(repository).values.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0 == "b" } })
            let onlyNew = try JSONFileAccountRepository(directory: directory, codec: EncryptedRecordFixtures.codec("b:\(keyB)"))
            #expect(try await onlyNew.list(provider: nil) == accounts.sortedByID())
        }
    }
}
