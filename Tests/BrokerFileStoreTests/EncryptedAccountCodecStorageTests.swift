import BrokerCore
import BrokerFileStore
import BrokerTestSupport
import Foundation
import Testing

/// The encrypted codec behind a ``JSONFileAccountRepository`` on a real data directory.
struct EncryptedAccountCodecStorageTests {
    private let keyA = EncryptedRecordFixtures.keyText()
    private let keyB = EncryptedRecordFixtures.keyText()
    private static let sentinels = [
        "access-SENTINEL-1", "refresh-SENTINEL-2", "secret-SENTINEL-3", "id-token-SENTINEL-4", "gho_access_github_",
    ]

    /// Runs a shared repository check against an encrypted store in a fresh directory.
    private func conformance(_ check: (RepositoryOpener) async throws -> Void) async throws {
        let codec = try EncryptedRecordFixtures.codec(keyA)
        try await TemporaryDirectory.with { directory in
            try await check { try JSONFileAccountRepository(directory: directory + "/data", codec: codec) }
        }
    }

    @Test func putGetListDelete() async throws { try await conformance(AccountRepositoryConformance.putGetListDelete) }
    @Test func restartPreservesEveryField() async throws { try await conformance(AccountRepositoryConformance.restartPreservesEveryField) }
    @Test func enteredCredentialSurvivesRestart() async throws {
        try await conformance(AccountRepositoryConformance.enteredCredentialSurvivesRestart)
    }
    @Test func pageFiltersAndPages() async throws { try await conformance(AccountRepositoryConformance.pageFiltersAndPages) }
    @Test func pagingUnderConcurrentInserts() async throws {
        try await conformance(AccountRepositoryConformance.pagingUnderConcurrentInserts)
    }
    @Test func concurrentUpdatesAreNotLost() async throws {
        try await conformance(AccountRepositoryConformance.concurrentUpdatesAreNotLost)
    }
    @Test func canonicallyEquivalentIDsAreDistinct() async throws {
        try await conformance(AccountRepositoryConformance.canonicallyEquivalentIDsAreDistinct)
    }
    @Test func longestUIDsAreStorable() async throws { try await conformance(AccountRepositoryConformance.longestUIDsAreStorable) }
    @Test func concurrentPutsSurviveRestart() async throws {
        try await conformance(AccountRepositoryConformance.concurrentPutsSurviveRestart)
    }

    @Test func noSecretIsInPlaintextAnywhereInTheDataDirectory() async throws {
        try await TemporaryDirectory.with { directory in
            let data = directory + "/data"
            let keyring = try EncryptionKeyring.loadOrGenerate(environmentValue: nil, dataDirectory: data).keyring
            let repository = try JSONFileAccountRepository(directory: data, codec: EncryptedAccountCodec(keyring: keyring))
            try await repository.put(.makeFull())
            for uid in ["1", "2", "3"] { try await repository.put(.make(uid: uid)) }
            _ = try await repository.update(id: "github:2") { account in
                account.map {
                    var next = $0; next.refreshToken = Secret("refresh-SENTINEL-2"); return next
                }
            }
            let found = try EncryptedRecordFixtures.scan(data, for: Self.sentinels)
            #expect(found.keys.sorted() == [AccountStoreFormat.journalName(1), SealedStoreMarker.fileName, "encryption-key"])
            #expect(found.values.allSatisfy { $0.isEmpty })
            // Compacted into the snapshot, the records stay sealed.
            try await repository.compact()
            let compacted = try EncryptedRecordFixtures.scan(data, for: Self.sentinels)
            #expect(
                compacted.keys.sorted() == [
                    AccountStoreFormat.journalName(2), SealedStoreMarker.fileName, AccountStoreFormat.snapshotName, "encryption-key",
                ])
            #expect(compacted.values.allSatisfy { $0.isEmpty })
            // The same scan does find every secret in a plaintext store, so it can fail.
            let plain = try JSONFileAccountRepository(directory: directory + "/plain")
            try await plain.put(.makeFull())
            try await plain.put(.make(uid: "1"))
            let plainFound = try EncryptedRecordFixtures.scan(directory + "/plain", for: Self.sentinels)
            #expect(Set(plainFound.values.flatMap { $0 }) == Set(Self.sentinels))
        }
    }

    @Test func wrongKeyStopsStartNamingTheRecordAndOverwritesNothing() async throws {
        try await TemporaryDirectory.with { directory in
            let writer = try JSONFileAccountRepository(directory: directory, codec: EncryptedRecordFixtures.codec("k1:\(keyA)"))
            try await writer.put(.make(uid: "1"))
            try await writer.put(.make(uid: "2"))
            let journal = AccountStoreFormat.journalName(1)
            let before = FileProbe.bytes(directory + "/" + journal)

            // A key of the same id is found wrong when start-up opens the first record sealed with it;
            // a keyring without that id, when the record is read.
            for (value, path, reason) in [
                (
                    "k1:\(keyB)", AccountStorePlaces.line(1, of: journal, in: directory),
                    "cannot decrypt access_token with key \"k1\": wrong key or tampered data"
                ),
                (
                    keyB, AccountStorePlaces.line(1, of: journal, in: directory),
                    "access_token is sealed with key id \"k1\", which BROKER_ENCRYPTION_KEY does not hold"
                ),
            ] {
                let codec = try EncryptedRecordFixtures.codec(value)
                #expect {
                    _ = try JSONFileAccountRepository(directory: directory, codec: codec)
                } throws: { error in
                    guard case .corrupt(let reported, let text) = error as? StoreError else { return false }
                    return reported == path && text.hasPrefix(reason) && "\(error)".contains("nothing was overwritten")
                }
            }
            #expect(FileProbe.bytes(directory + "/" + journal) == before)
            #expect(AccountStoreFiles.fileNames(in: directory) == [journal])
            #expect(
                try await JSONFileAccountRepository(directory: directory, codec: EncryptedRecordFixtures.codec("k1:\(keyA)"))
                    .list(provider: nil).count == 2)
        }
    }

    @Test func tamperedRecordStopsStartNamingTheRecordAndIsLeftAsItIs() async throws {
        try await TemporaryDirectory.with { directory in
            let codec = try EncryptedRecordFixtures.codec(keyA)
            try await JSONFileAccountRepository(directory: directory, codec: codec).put(.makeFull())
            try AccountStoreFiles.rewrite(in: directory) { _, record in
                try EncryptedRecordFixtures.flip(record, field: "token_secret", part: "ct") { $0 / 2 }
            }
            let snapshot = directory + "/" + AccountStoreFormat.snapshotName
            let tampered = FileProbe.bytes(snapshot)

            #expect(
                throws: StoreError.corrupt(
                    path: AccountStorePlaces.line(2, of: AccountStoreFormat.snapshotName, in: directory),
                    reason: "cannot decrypt token_secret with key \"\(codec.keyring.current.id)\": wrong key or tampered data")
            ) {
                _ = try JSONFileAccountRepository(directory: directory, codec: codec)
            }
            #expect(FileProbe.bytes(snapshot) == tampered)
        }
    }

    @Test func envelopeCopiedFromAnotherAccountStopsStart() async throws {
        try await TemporaryDirectory.with { directory in
            let codec = try EncryptedRecordFixtures.codec(keyA)
            do {
                let repository = try JSONFileAccountRepository(directory: directory, codec: codec)
                try await repository.put(.make(uid: "1", accessToken: "low-privilege"))
                try await repository.put(.make(uid: "2", accessToken: "high-privilege"))
            }
            let donor = try EncryptedRecordFixtures.json(try #require(try AccountStoreFiles.records(in: directory)["github:2"]))
            try AccountStoreFiles.rewrite(in: directory) { id, record in
                guard id == "github:1" else { return record }
                return try EncryptedRecordFixtures.edit(record) { $0["access_token"] = donor["access_token"] }
            }
            let snapshot = directory + "/" + AccountStoreFormat.snapshotName
            let planted = FileProbe.bytes(snapshot)

            #expect(
                throws: StoreError.corrupt(
                    path: AccountStorePlaces.line(2, of: AccountStoreFormat.snapshotName, in: directory),
                    reason: "cannot decrypt access_token with key \"\(codec.keyring.current.id)\": wrong key or tampered data"
                )
            ) {
                _ = try JSONFileAccountRepository(directory: directory, codec: codec)
            }
            #expect(FileProbe.bytes(snapshot) == planted)
        }
    }
}
