import BrokerTestSupport
import BrokerCore
import BrokerCrypto
import BrokerFileStore
import Foundation
import Testing

/// `token-broker rekey` re-encrypts stored accounts with the current key, so an old key can be dropped.
@Suite(.scoped) struct RekeyCommandTests {
    @Test func rekeyMovesEveryRecordToTheCurrentKey() async throws {
        let dir = try TemporaryDirectory.scoped(prefix: "broker-rekey")
        let keyA = "a:" + Base64.encode(SecureRandom.bytes(32))
        let keyB = "b:" + Base64.encode(SecureRandom.bytes(32))
        let old = try EncryptionKeyring.parse(keyA)
        let repository = try JSONFileAccountRepository(directory: dir, codec: EncryptedAccountCodec(keyring: old))
        let now = Date()
        for i in 0..<5 {
            try await repository.put(Account(provider: "weibo", uid: "\(i)", accessToken: Secret("REKEY-TOKEN-SENTINEL-\(i)"),
                                             createdAt: now, updatedAt: now))
        }
        // The new key alone cannot open the old records: start-up refuses rather than guessing.
        let (refused, refusal) = try await runBroker(["rekey"], environment: ["BROKER_DATA_DIR": dir, "BROKER_ENCRYPTION_KEY": keyB])
        #expect(refused == 1)
        #expect(refusal.contains("weibo"))

        let (status, log) = try await runBroker(["rekey"], environment: ["BROKER_DATA_DIR": dir, "BROKER_ENCRYPTION_KEY": keyB + "," + keyA])
        #expect(status == 0)
        #expect(log.contains("rewritten=5") && log.contains("total=5"))
        #expect(!log.contains("REKEY-TOKEN-SENTINEL"))

        let current = try JSONFileAccountRepository(directory: dir, codec: EncryptedAccountCodec(keyring: try EncryptionKeyring.parse(keyB)))
        #expect(try await current.get(id: "weibo:3")?.accessToken.value == "REKEY-TOKEN-SENTINEL-3")

        let (again, second) = try await runBroker(["rekey"], environment: ["BROKER_DATA_DIR": dir, "BROKER_ENCRYPTION_KEY": keyB])
        #expect(again == 0)
        #expect(second.contains("rewritten=0"))
    }

    @Test func aBadKeyIsAConfigurationError() async throws {
        let dir = try TemporaryDirectory.scoped(prefix: "broker-rekey")
        let (status, log) = try await runBroker(["rekey"], environment: ["BROKER_DATA_DIR": dir, "BROKER_ENCRYPTION_KEY": "not-base64!"])
        #expect(status == 2)
        #expect(log.contains("BROKER_ENCRYPTION_KEY"))
    }
}
