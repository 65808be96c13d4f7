import BrokerCore
import BrokerCrypto
import BrokerFileStore
import BrokerTestSupport
import Foundation
import Testing

/// The OpenID `nonce` a pending flow keeps: sealed at rest like the verifier, and absent from flows the previous version wrote.
struct OIDCFlowFormatTests {
    static func sealer() throws -> EncryptedAccountCodec {
        EncryptedAccountCodec(keyring: try EncryptionKeyring.parse("k1:" + Base64.encode(SecureRandom.bytes(32))))
    }

    /// A flow record exactly as the previous version wrote it: no `nonce` member.
    static func previousRecord(state: String) -> String {
        #"{"binding":"api","code_verifier":"dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk","created_at":"2026-12-01T08:00:00Z","#
            + #""expires_at":"2099-12-01T08:10:00Z","provider":"google","return_to":"https://app.example/done","state":"\#(state)","version":1}"#
    }

    @Test func aFlowRecordOfThePreviousVersionIsReadWithoutANonce() throws {
        let state = PendingFlow.randomState()
        let flow = try PendingFlowCodec.decode(Array(Self.previousRecord(state: state).utf8), path: "test")
        #expect(flow.state == state)
        #expect(flow.nonce == nil)
        #expect(flow.codeVerifier?.value == "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        #expect(flow.returnTo == "https://app.example/done")
    }

    @Test func aJournalLineOfThePreviousVersionIsTakenWithoutANonce() async throws {
        try await TemporaryDirectory.with { directory in
            let state = PendingFlow.randomState()
            try FileManager.default.createDirectory(atPath: directory + "/flows", withIntermediateDirectories: true)
            let line = "{\"put\":" + Self.previousRecord(state: state) + "}\n"
            try Data(line.utf8).write(to: URL(fileURLWithPath: directory + "/flows/" + JournalFlowStore.journalName))
            let store = try JournalFlowStore(directory: directory, durable: false, sealer: try Self.sealer())
            let taken = try #require(try await store.take(state: state, now: .fixture))
            #expect(taken.provider == "google" && taken.nonce == nil)
        }
    }

    @Test func theNonceIsSealedAtRestAndComesBackIntact() async throws {
        try await TemporaryDirectory.with { directory in
            let sealer = try Self.sealer()
            var flow = PendingFlow.make(state: PendingFlow.randomState())
            flow.nonce = Secret("NONCE-SENTINEL-0123456789abcdef")
            let bytes = try PendingFlowCodec.encode(flow, sealer: sealer)
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(text.contains("\"nonce\" : \"sealed:v1:k1:"))
            #expect(!text.contains("SENTINEL"))
            #expect(try PendingFlowCodec.decode(bytes, path: "test", sealer: sealer) == flow)
            let store = try JournalFlowStore(directory: directory, durable: false, sealer: sealer)
            try await store.put(flow)
            let journal = try String(contentsOfFile: store.flowsDirectory + "/" + JournalFlowStore.journalName, encoding: .utf8)
            #expect(!journal.contains("SENTINEL"))
            let reopened = try JournalFlowStore(directory: directory, durable: false, sealer: sealer)
            #expect(try await reopened.take(state: flow.state, now: .fixture)?.nonce == flow.nonce)
            #expect("\(flow)".contains("nonce: <redacted>"))
        }
    }
}
