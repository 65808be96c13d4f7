import BrokerCore
import Foundation
import Testing

/// Opens a flow store on one backing store; calling it again on the same store simulates a restart.
public typealias FlowStoreOpener = @Sendable () throws -> any FlowStore

/// The behaviour every file-backed ``FlowStore`` must show, written once for each of them.
///
/// Each function gets an opener for a fresh, empty backing store.
public enum FlowStoreConformance {
    /// A flow is handed out by the first take and never again.
    public static func takenExactlyOnce(_ open: FlowStoreOpener) async throws {
        let store = try open()
        let flow = PendingFlow.make(state: PendingFlow.randomState())
        try await store.put(flow)
        #expect(try await store.take(state: flow.state, now: .fixture) == flow)
        #expect(try await store.take(state: flow.state, now: .fixture) == nil)
        #expect(try await open().take(state: flow.state, now: .fixture) == nil)
    }

    /// Of twenty concurrent takes of one state, exactly one gets the flow, also on a store opened after the put.
    public static func concurrentTakesHaveOneWinner(_ open: FlowStoreOpener) async throws {
        let writer = try open()
        let flows = (0..<5).map { _ in PendingFlow.make(state: PendingFlow.randomState()) }
        for flow in flows { try await writer.put(flow) }
        let store = try open()
        for flow in flows {
            let winners = try await withThrowingTaskGroup(of: PendingFlow?.self) { group in
                for _ in 0..<20 { group.addTask { try await store.take(state: flow.state, now: .fixture) } }
                var taken: [PendingFlow] = []
                for try await result in group { if let result { taken.append(result) } }
                return taken
            }
            #expect(winners == [flow])
        }
    }

    /// A flow is unusable from its `expiresAt` on, and a take at that moment removes it.
    public static func expiredFlowIsNotReturnedAndIsRemoved(_ open: FlowStoreOpener) async throws {
        let store = try open()
        let flow = PendingFlow.make(state: PendingFlow.randomState(), lifetime: 600)
        try await store.put(flow)
        #expect(try await store.take(state: flow.state, now: flow.expiresAt) == nil)
        #expect(try await store.take(state: flow.state, now: .fixture) == nil)

        let fresh = PendingFlow.make(state: PendingFlow.randomState(), lifetime: 600)
        try await store.put(fresh)
        #expect(try await store.take(state: fresh.state, now: fresh.expiresAt.addingTimeInterval(-1)) == fresh)
    }

    /// A device sign-in is listed for the poller, read without being taken, replaced (its next poll) only while
    /// pending, kept across a restart with its device code, and gone from the list once taken.
    public static func deviceFlowsAreListedReplacedAndKept(_ open: FlowStoreOpener) async throws {
        let store = try open()
        var device = PendingFlow(
            state: PendingFlow.randomState(), provider: "acme", binding: "api", createdAt: .fixture,
            expiresAt: Date.fixture.addingTimeInterval(900), endUser: EndUser(id: "user-7"),
            device: DeviceContext(deviceCode: Secret("device-code-SENTINEL"), interval: 5, nextPollAt: Date.fixture.addingTimeInterval(5)))
        let other = PendingFlow.make(state: PendingFlow.randomState())
        try await store.put(device)
        try await store.put(other)
        #expect(try await store.deviceFlows(now: .fixture) == [device])
        #expect(try await store.pending(state: device.state, now: .fixture) == device)
        device.device?.interval = 10
        device.device?.nextPollAt = Date.fixture.addingTimeInterval(20)
        #expect(try await store.replace(device))
        let reopened = try open()
        #expect(try await reopened.pending(state: device.state, now: .fixture) == device)
        #expect(try await reopened.deviceFlows(now: .fixture) == [device])
        #expect(try await reopened.deviceFlows(now: device.expiresAt) == [])
        #expect(try await reopened.take(state: device.state, now: .fixture) == device)
        #expect(try await reopened.replace(device) == false)
        #expect(try await reopened.deviceFlows(now: .fixture) == [])
        #expect(try await reopened.pending(state: device.state, now: .fixture) == nil)
        #expect(try await reopened.take(state: other.state, now: .fixture) == other)
    }

    /// A flow started before a restart (OAuth 1.0a fields and per-account settings included) completes after it, once.
    public static func pendingFlowSurvivesRestart(_ open: FlowStoreOpener) async throws {
        let flow = PendingFlow(
            state: PendingFlow.randomState(), provider: "twitter", binding: "api-caller-7",
            requestToken: "request-token", requestTokenSecret: Secret("request-secret"),
            returnTo: nil, createdAt: .fixture, expiresAt: Date.fixture.addingTimeInterval(900),
            endUser: EndUser(id: "user-42", email: "ada@example.com", name: "Ada"), tags: ["plan": "pro", "env": "prod"],
            settings: ["subdomain": "acme", "region": "eu"])
        let used = PendingFlow.make(state: PendingFlow.randomState())
        let before = try open()
        try await before.put(flow)
        try await before.put(used)
        #expect(try await before.take(state: used.state, now: .fixture) == used)

        let after = try open()
        #expect(try await after.take(state: used.state, now: .fixture) == nil)
        #expect(try await after.take(state: flow.state, now: .fixture) == flow)
        #expect(try await open().take(state: flow.state, now: .fixture) == nil)
    }

    /// `purgeExpired` removes and counts only expired flows; the others stay usable, also after a restart.
    public static func purgeRemovesOnlyExpiredFlows(_ open: FlowStoreOpener) async throws {
        let store = try open()
        let expired = (0..<3).map { _ in PendingFlow.make(state: PendingFlow.randomState(), lifetime: 60) }
        let live = (0..<2).map { _ in PendingFlow.make(state: PendingFlow.randomState(), lifetime: 3600) }
        for flow in expired + live { try await store.put(flow) }

        let later = Date.fixture.addingTimeInterval(120)
        #expect(try await store.purgeExpired(now: later) == 3)
        #expect(try await store.purgeExpired(now: later) == 0)
        let reopened = try open()
        #expect(try await reopened.purgeExpired(now: later) == 0)
        for flow in expired { #expect(try await reopened.take(state: flow.state, now: .fixture) == nil) }
        for flow in live { #expect(try await reopened.take(state: flow.state, now: .fixture) == flow) }
    }

    /// A state that is not 16–128 base64url characters is never stored and never found.
    public static func malformedStateIsRefused(_ open: FlowStoreOpener) async throws {
        let store = try open()
        for state in [
            "../accounts/github%3A1", "short", String(repeating: "a", count: 129), "has/slash/in/it/abcdef", "line\nbreak-in-the-state", "",
        ] {
            #expect(try await store.take(state: state, now: .fixture) == nil)
            await #expect(throws: StoreError.self) { try await store.put(PendingFlow.make(state: state)) }
        }
    }

    /// A state spelled with a look-alike that Swift calls equal (U+212A KELVIN SIGN for `K`) takes nothing;
    /// the exact state still takes its flow.
    public static func lookAlikeStateTakesNothing(_ open: FlowStoreOpener) async throws {
        let store = try open()
        let flow = PendingFlow.make(state: "K" + PendingFlow.randomState())
        try await store.put(flow)
        let lookAlike = "\u{212A}" + flow.state.dropFirst()
        #expect(lookAlike == flow.state)  // String equality is canonical equivalence
        #expect(try await store.take(state: lookAlike, now: .fixture) == nil)
        #expect(try await store.take(state: flow.state, now: .fixture) == flow)
    }
}
