import BrokerCore
import BrokerCrypto
import BrokerFileStore
import BrokerTestSupport
import Foundation
import Testing

/// Pending flows keep their PKCE verifier and request-token secret sealed at rest.
struct SealedFlowStoreTests {
    static func sealer() throws -> EncryptedAccountCodec {
        EncryptedAccountCodec(keyring: try EncryptionKeyring.parse("k1:" + Base64.encode(SecureRandom.bytes(32))))
    }

    static func filesText(_ directory: String) -> String {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.compactMap { FileManager.default.contents(atPath: directory + "/" + $0) }
            .map { String(decoding: $0, as: UTF8.self) }.joined()
    }

    @Test func verifierAndRequestTokenSecretAreSealedAndStillTakenOnce() async throws {
        try await TemporaryDirectory.with { directory in
            let sealer = try Self.sealer()
            let store = try JSONFileFlowStore(directory: directory, durable: false, sealer: sealer)
            var flow = PendingFlow.make(state: PendingFlow.randomState())
            flow.requestToken = "request-token"
            flow.requestTokenSecret = Secret("REQUEST-SECRET-SENTINEL")
            try await store.put(flow)
            let text = Self.filesText(store.flowsDirectory)
            #expect(text.contains("sealed:v1:k1:"))
            #expect(!text.contains("SENTINEL"))
            #expect(try await store.take(state: flow.state, now: .fixture) == flow)
            #expect(try await store.take(state: flow.state, now: .fixture) == nil)
        }
    }

    @Test func aDeviceCodeIsSealedInTheJournalAndReadBackAfterARestart() async throws {
        try await TemporaryDirectory.with { directory in
            let sealer = try Self.sealer()
            var flow = PendingFlow.make(state: PendingFlow.randomState())
            flow.device = DeviceContext(
                deviceCode: Secret("DEVICE-CODE-SENTINEL"), interval: 10, nextPollAt: Date.fixture.addingTimeInterval(10))
            let store = try JournalFlowStore(directory: directory, durable: false, sealer: sealer)
            try await store.put(flow)
            let text = Self.filesText(store.flowsDirectory)
            #expect(text.contains("\"device\":{\"device_code\":\"sealed:v1:k1:"))
            #expect(!text.contains("SENTINEL"))
            let reopened = try JournalFlowStore(directory: directory, durable: false, sealer: sealer)
            #expect(try await reopened.deviceFlows(now: .fixture) == [flow])
        }
    }

    @Test func aFlowSealedWithAnotherKeyIsCorruptNotGarbage() async throws {
        try await TemporaryDirectory.with { directory in
            let flow = PendingFlow.make(state: PendingFlow.randomState())
            try await JSONFileFlowStore(directory: directory, sealer: try Self.sealer()).put(flow)
            let other = try JSONFileFlowStore(directory: directory, sealer: try Self.sealer())
            await #expect(throws: StoreError.self) { _ = try await other.take(state: flow.state, now: .fixture) }
        }
    }

    @Test func plaintextFlowsFromAStoreWithoutAKeyAreStillRead() async throws {
        try await TemporaryDirectory.with { directory in
            let flow = PendingFlow.make(state: PendingFlow.randomState())
            try await JSONFileFlowStore(directory: directory).put(flow)
            let sealed = try JSONFileFlowStore(directory: directory, sealer: try Self.sealer())
            #expect(try await sealed.take(state: flow.state, now: .fixture) == flow)
        }
    }
}
