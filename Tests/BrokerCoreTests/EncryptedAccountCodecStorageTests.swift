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
            #expect(
                found.keys.sorted() == [
                    "accounts/github%3A1.json", "accounts/github%3A2.json", "accounts/github%3A3.json",
                    "accounts/twitter%3A783214.json", "encryption-key",
                ])
            #expect(found.values.allSatisfy { $0.isEmpty })
            // The same scan does find every secret in a plaintext store, so it can fail.
            let plain = try JSONFileAccountRepository(directory: directory + "/plain")
            try await plain.put(.makeFull())
            try await plain.put(.make(uid: "1"))
            let plainFound = try EncryptedRecordFixtures.scan(directory + "/plain", for: Self.sentinels)
            #expect(Set(plainFound.values.flatMap { $0 }) == Set(Self.sentinels))
        }
    }

    @Test func wrongKeyStopsStartNamingTheFileAndOverwritesNothing() async throws {
        try await TemporaryDirectory.with { directory in
            let writer = try JSONFileAccountRepository(directory: directory, codec: EncryptedRecordFixtures.codec("k1:\(keyA)"))
            try await writer.put(.make(uid: "1"))
            try await writer.put(.make(uid: "2"))
            let files = ["github%3A1.json", "github%3A2.json"].map { writer.accountsDirectory + "/" + $0 }
            let before = files.map(FileProbe.bytes)

            for (value, reason) in [
                ("k1:\(keyB)", "cannot decrypt access_token with key \"k1\": wrong key or tampered data"),
                (keyB, "access_token is sealed with key id \"k1\", which BROKER_ENCRYPTION_KEY does not hold"),
            ] {
                let codec = try EncryptedRecordFixtures.codec(value)
                #expect {
                    _ = try JSONFileAccountRepository(directory: directory, codec: codec)
                } throws: { error in
                    guard case .corrupt(let path, let text) = error as? StoreError else { return false }
                    return path == files[0] && text.hasPrefix(reason) && "\(error)".contains("nothing was overwritten")
                }
            }
            #expect(files.map(FileProbe.bytes) == before)
            #expect(FileProbe.names(writer.accountsDirectory) == ["github%3A1.json", "github%3A2.json"])
            #expect(
                try await JSONFileAccountRepository(directory: directory, codec: EncryptedRecordFixtures.codec("k1:\(keyA)"))
                    .list(provider: nil).count == 2)
        }
    }

    @Test func tamperedRecordStopsStartNamingTheFileAndIsLeftAsItIs() async throws {
        try await TemporaryDirectory.with { directory in
            let codec = try EncryptedRecordFixtures.codec(keyA)
            let repository = try JSONFileAccountRepository(directory: directory, codec: codec)
            try await repository.put(.makeFull())
            let path = repository.accountsDirectory + "/twitter%3A783214.json"
            let tampered = try EncryptedRecordFixtures.flip(try #require(FileProbe.bytes(path)), field: "token_secret", part: "ct") {
                $0 / 2
            }
            try Data(tampered).write(to: URL(fileURLWithPath: path))

            #expect(
                throws: StoreError.corrupt(
                    path: path, reason: "cannot decrypt token_secret with key \"\(codec.keyring.current.id)\": wrong key or tampered data")
            ) {
                _ = try JSONFileAccountRepository(directory: directory, codec: codec)
            }
            #expect(FileProbe.bytes(path) == tampered)
        }
    }

    @Test func envelopeCopiedFromAnotherAccountFileStopsStart() async throws {
        try await TemporaryDirectory.with { directory in
            let codec = try EncryptedRecordFixtures.codec(keyA)
            let repository = try JSONFileAccountRepository(directory: directory, codec: codec)
            try await repository.put(.make(uid: "1", accessToken: "low-privilege"))
            try await repository.put(.make(uid: "2", accessToken: "high-privilege"))
            let victim = repository.accountsDirectory + "/github%3A1.json"
            let donor = try EncryptedRecordFixtures.json(try #require(FileProbe.bytes(repository.accountsDirectory + "/github%3A2.json")))
            let planted = try EncryptedRecordFixtures.edit(try #require(FileProbe.bytes(victim))) {
                $0["access_token"] = donor["access_token"]
            }
            try Data(planted).write(to: URL(fileURLWithPath: victim))

            #expect(
                throws: StoreError.corrupt(
                    path: victim, reason: "cannot decrypt access_token with key \"\(codec.keyring.current.id)\": wrong key or tampered data"
                )
            ) {
                _ = try JSONFileAccountRepository(directory: directory, codec: codec)
            }
            #expect(FileProbe.bytes(victim) == planted)
        }
    }
}
