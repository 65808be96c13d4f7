import BrokerCore
import BrokerFileStore
import BrokerTestSupport
import Foundation
import Glibc
import Testing

/// The JSON-file flow store: single use, expiry, restart and refusal of malformed states.
struct JSONFileFlowStoreTests {
    private func conformance(_ check: (FlowStoreOpener) async throws -> Void) async throws {
        try await TemporaryDirectory.with { directory in
            try await check { try JSONFileFlowStore(directory: directory + "/data") }
        }
    }

    @Test func sharedSuiteTakenExactlyOnce() async throws { try await conformance(FlowStoreConformance.takenExactlyOnce) }
    @Test func sharedSuiteConcurrentTakes() async throws { try await conformance(FlowStoreConformance.concurrentTakesHaveOneWinner) }
    @Test func sharedSuiteExpiry() async throws { try await conformance(FlowStoreConformance.expiredFlowIsNotReturnedAndIsRemoved) }
    @Test func sharedSuiteRestart() async throws { try await conformance(FlowStoreConformance.pendingFlowSurvivesRestart) }
    @Test func sharedSuitePurge() async throws { try await conformance(FlowStoreConformance.purgeRemovesOnlyExpiredFlows) }
    @Test func sharedSuiteMalformedState() async throws { try await conformance(FlowStoreConformance.malformedStateIsRefused) }
    @Test func sharedSuiteLookAlikeState() async throws { try await conformance(FlowStoreConformance.lookAlikeStateTakesNothing) }

    @Test func flowIsTakenExactlyOnce() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try JSONFileFlowStore(directory: directory)
            let flow = PendingFlow.make()
            try await store.put(flow)
            #expect(try await store.take(state: flow.state, now: .fixture) == flow)
            #expect(try await store.take(state: flow.state, now: .fixture) == nil)
            #expect(FileProbe.names(store.flowsDirectory).isEmpty)
        }
    }

    @Test(arguments: [true, false])
    func singleUseAndRestartHoldWithAndWithoutFsync(durable: Bool) async throws {
        try await TemporaryDirectory.with { directory in
            let store = try JSONFileFlowStore(directory: directory, durable: durable)
            let flow = PendingFlow.make(state: PendingFlow.randomState())
            try await store.put(flow)
            let reopened = try JSONFileFlowStore(directory: directory, durable: durable)
            let winners = try await withThrowingTaskGroup(of: PendingFlow?.self) { group in
                for _ in 0..<20 { group.addTask { try await reopened.take(state: flow.state, now: .fixture) } }
                var taken: [PendingFlow] = []
                for try await result in group { if let result { taken.append(result) } }
                return taken
            }
            #expect(winners == [flow])
            #expect(FileProbe.names(reopened.flowsDirectory).isEmpty)
        }
    }

    @Test func flowFileIs0600InA0700Directory() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try JSONFileFlowStore(directory: directory)
            let flow = PendingFlow.make()
            try await store.put(flow)
            #expect(FileProbe.mode(store.flowsDirectory + "/\(flow.state).json") == 0o600)
            #expect(FileProbe.mode(store.flowsDirectory) == 0o700)
        }
    }

    @Test func expiredFlowIsNotReturnedAndIsRemoved() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try JSONFileFlowStore(directory: directory)
            let flow = PendingFlow.make(lifetime: 600)
            try await store.put(flow)
            // At exactly expiresAt the flow is no longer usable.
            #expect(try await store.take(state: flow.state, now: flow.expiresAt) == nil)
            #expect(FileProbe.names(store.flowsDirectory).isEmpty)

            let fresh = PendingFlow.make(state: PendingFlow.randomState(), lifetime: 600)
            try await store.put(fresh)
            #expect(try await store.take(state: fresh.state, now: fresh.expiresAt.addingTimeInterval(-1)) == fresh)
        }
    }

    @Test func twentyConcurrentTakesOfOneStateYieldExactlyOneFlow() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try JSONFileFlowStore(directory: directory)
            for _ in 0..<5 {
                let flow = PendingFlow.make(state: PendingFlow.randomState())
                try await store.put(flow)
                let winners = try await withThrowingTaskGroup(of: PendingFlow?.self) { group in
                    for _ in 0..<20 {
                        group.addTask { try await store.take(state: flow.state, now: .fixture) }
                    }
                    var taken: [PendingFlow] = []
                    for try await result in group { if let result { taken.append(result) } }
                    return taken
                }
                #expect(winners == [flow])
            }
            #expect(FileProbe.names(store.flowsDirectory).isEmpty)
        }
    }

    @Test func flowStartedBeforeRestartCompletesAfterIt() async throws {
        try await TemporaryDirectory.with { directory in
            let flow = PendingFlow(
                state: PendingFlow.randomState(), provider: "twitter", binding: "api-caller-7",
                requestToken: "request-token", requestTokenSecret: Secret("request-secret"),
                returnTo: nil, createdAt: .fixture, expiresAt: Date.fixture.addingTimeInterval(900))
            try await JSONFileFlowStore(directory: directory).put(flow)
            let restarted = try JSONFileFlowStore(directory: directory)
            #expect(try await restarted.take(state: flow.state, now: .fixture) == flow)
        }
    }

    @Test func purgeExpiredCountsAndRemovesOnlyExpiredAndBrokenFlows() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try JSONFileFlowStore(directory: directory)
            let expired = (0..<3).map { _ in PendingFlow.make(state: PendingFlow.randomState(), lifetime: 60) }
            let live = (0..<2).map { _ in PendingFlow.make(state: PendingFlow.randomState(), lifetime: 3600) }
            for flow in expired + live { try await store.put(flow) }
            try FileProbe.plant("{\"version\": 1, \"sta", at: store.flowsDirectory + "/brokenFlowStateXXXXXX.json")

            let removed = try await store.purgeExpired(now: Date.fixture.addingTimeInterval(120))
            #expect(removed == 4)
            #expect(FileProbe.names(store.flowsDirectory) == live.map { "\($0.state).json" }.sorted())
            #expect(try await store.purgeExpired(now: Date.fixture.addingTimeInterval(120)) == 0)
            for flow in live { #expect(try await store.take(state: flow.state, now: .fixture) == flow) }
        }
    }

    @Test(arguments: [
        "../accounts/github%3A1", "short", String(repeating: "a", count: 129), "has/slash/in/it/abcdef", "dots.are.not.allowed.x", "",
    ])
    func malformedStateIsRefusedWithoutTouchingFiles(state: String) async throws {
        try await TemporaryDirectory.with { directory in
            let store = try JSONFileFlowStore(directory: directory)
            // Plant a file exactly where a naive join of the state would point.
            let target = store.flowsDirectory + "/" + state + ".json"
            try? FileManager.default.createDirectory(
                atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try? FileProbe.plant("{}", at: target)
            let plantedBefore = FileProbe.bytes(target)

            #expect(try await store.take(state: state, now: .fixture) == nil)
            #expect(FileProbe.bytes(target) == plantedBefore)
            await #expect(throws: StoreError.self) { try await store.put(PendingFlow.make(state: state)) }
        }
    }

    @Test func leftoverTemporaryAndClaimedFilesAreRemovedOnStart() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try JSONFileFlowStore(directory: directory)
            let kept = PendingFlow.make(state: PendingFlow.randomState())
            try await store.put(kept)
            let used = PendingFlow.make(state: PendingFlow.randomState())
            try FileProbe.plant("{", at: store.flowsDirectory + "/\(used.state).json.tmp.0123456789abcdef")
            try FileProbe.plant("{}", at: store.flowsDirectory + "/\(used.state).json.taken.fedcba9876543210")

            let restarted = try JSONFileFlowStore(directory: directory)
            #expect(FileProbe.names(restarted.flowsDirectory) == ["\(kept.state).json"])
            #expect(try await restarted.take(state: used.state, now: .fixture) == nil)
        }
    }

    @Test func corruptFlowIsReportedAndConsumed() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try JSONFileFlowStore(directory: directory)
            let state = PendingFlow.randomState()
            let path = store.flowsDirectory + "/\(state).json"
            try FileProbe.plant("{\"version\": 1", at: path)
            await #expect(throws: StoreError.corrupt(path: path, reason: "not valid JSON (truncated or damaged)")) {
                _ = try await store.take(state: state, now: .fixture)
            }
            #expect(FileProbe.names(store.flowsDirectory).isEmpty)
        }
    }
}
