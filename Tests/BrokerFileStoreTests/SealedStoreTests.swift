import BrokerCore
import BrokerCrypto
import BrokerTestSupport
import Foundation
import Glibc
import Testing

@testable import BrokerFileStore

/// A store the broker sealed holds only sealed records: a plaintext record put there by anyone else is refused, and a
/// store of an earlier version has its plaintext records sealed once, at its first start.
struct SealedStoreTests {
    private static let key = "k1:" + Base64.encode((0..<32).map { UInt8($0 &* 7) })
    private func codec() throws -> EncryptedAccountCodec {
        EncryptedAccountCodec(keyring: try EncryptionKeyring.parse(Self.key, source: "test"))
    }

    private func journal(_ directory: String, _ generation: Int = 1) -> String {
        directory + "/" + AccountStoreFormat.journalName(generation)
    }

    /// A journal line putting `account` in plaintext, as an attacker who can append to the journal writes it.
    private func forgedPutLine(_ account: Account) throws -> [UInt8] {
        Array("{\"put\":".utf8) + JSONLine.compact(try PlainJSONAccountCodec().encode(account)) + Array("}\n".utf8)
    }

    private func append(_ bytes: [UInt8], to path: String) throws {
        let handle = try #require(FileHandle(forWritingAtPath: path))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(bytes))
    }

    /// The error of opening the store under `directory`, or nil when it opens.
    private func openingError(_ directory: String) throws -> StoreError? {
        do {
            _ = try JSONFileAccountRepository(directory: directory, codec: codec(), openSealedInBackground: false)
            return nil
        } catch let error as StoreError {
            return error
        }
    }

    @Test func aPlaintextLineAppendedToASealedStoresJournalStopsStartUpNamingIt() async throws {
        try await TemporaryDirectory.with { directory in
            let repository = try JSONFileAccountRepository(directory: directory, codec: codec())
            try await repository.put(.make(uid: "1", accessToken: "real-token"))
            try await repository.put(.make(uid: "2"))
            _ = try await repository.delete(id: "github:2")
            #expect(FileManager.default.fileExists(atPath: directory + "/" + SealedStoreMarker.fileName))
            // One line replaces the token of account 1, the next brings deleted account 2 back.
            try append(try forgedPutLine(.make(uid: "1", accessToken: "forged-token")), to: journal(directory))
            try append(try forgedPutLine(.make(uid: "2", accessToken: "forged-token")), to: journal(directory))
            let before = try #require(FileProbe.bytes(journal(directory)))
            let error = try #require(try openingError(directory))
            guard case .corrupt(let path, let reason) = error else { Issue.record("\(error)"); return }
            #expect(path == journal(directory) + " line 4")
            #expect(reason.contains("plaintext record in a sealed store"))
            #expect(!error.description.contains("forged-token"))
            // Nothing was changed on the way.
            #expect(FileProbe.bytes(journal(directory)) == before)
        }
    }

    @Test func aPlaintextRecordInASealedStoresSnapshotStopsStartUpEvenWhenALaterLineReplacesIt() async throws {
        try await TemporaryDirectory.with { directory in
            let repository = try JSONFileAccountRepository(directory: directory, codec: codec())
            for uid in 1...3 { try await repository.put(.make(uid: String(uid))) }
            try await repository.compact()
            // A later sealed write of the account does not make the injected line acceptable.
            try await repository.put(.make(uid: "2", accessToken: "sealed-later"))
            let snapshot = directory + "/" + AccountStoreFormat.snapshotName
            var lines = String(decoding: try #require(FileProbe.bytes(snapshot)), as: UTF8.self).split(separator: "\n").map(String.init)
            lines[2] = String(
                decoding: JSONLine.compact(try PlainJSONAccountCodec().encode(.make(uid: "2", accessToken: "forged"))), as: UTF8.self)
            try FileProbe.plant(lines.joined(separator: "\n") + "\n", at: snapshot)
            let error = try #require(try openingError(directory))
            guard case .corrupt(let path, let reason) = error else { Issue.record("\(error)"); return }
            #expect(path == snapshot + " line 3")
            #expect(reason.contains("plaintext"))
        }
    }

    /// A store an earlier version wrote (no mark, plaintext records from before encryption at rest beside sealed ones)
    /// opens with every account as it was, its plaintext records sealed and the store marked; an injected line after that is refused.
    @Test func aStoreOfAnEarlierVersionHasItsPlaintextRecordsSealedOnceThenRefusesNewOnes() async throws {
        try await TemporaryDirectory.with { directory in
            // Records from before encryption at rest: the plaintext codec writes them.
            let plain = try JSONFileAccountRepository(directory: directory, codec: PlainJSONAccountCodec())
            try await plain.put(.make(uid: "1", accessToken: "plain-one"))
            try await plain.put(.make(uid: "2", accessToken: "plain-two"))
            try await plain.compact()
            try await plain.put(.make(uid: "3", accessToken: "plain-three"))
            // Then sealed writes, as the previous version appended them: lines of a sealed journal, and no mark.
            try await TemporaryDirectory.with { other in
                let sealed = try JSONFileAccountRepository(directory: other, codec: codec())
                try await sealed.put(.make(uid: "2", accessToken: "sealed-two"))
                try await sealed.put(.make(uid: "4", accessToken: "sealed-four"))
                try append(try #require(FileProbe.bytes(journal(other))), to: journal(directory, plain.storeSizes.generation))
            }
            #expect(!FileManager.default.fileExists(atPath: directory + "/" + SealedStoreMarker.fileName))

            let upgraded = try JSONFileAccountRepository(directory: directory, codec: codec())
            #expect(upgraded.sealedAtOpen == 2)
            #expect(FileManager.default.fileExists(atPath: directory + "/" + SealedStoreMarker.fileName))
            let tokens = try await upgraded.list(provider: nil).map(\.accessToken.value)
            #expect(tokens == ["plain-one", "sealed-two", "plain-three", "sealed-four"])
            try await upgraded.compact()
            let files = AccountStoreFiles.fileNames(in: directory).compactMap { FileProbe.bytes(directory + "/" + $0) }
            #expect(!files.contains { String(decoding: $0, as: UTF8.self).contains("plain-") })

            let again = try JSONFileAccountRepository(directory: directory, codec: codec())
            #expect(again.sealedAtOpen == 0)
            #expect(try await again.list(provider: nil).map(\.accessToken.value) == tokens)
            try append(try forgedPutLine(.make(uid: "1", accessToken: "forged")), to: journal(directory, again.storeSizes.generation))
            #expect(try openingError(directory) != nil)
        }
    }
}
