import BrokerCore
import BrokerFileStore
import BrokerTestSupport
import Foundation
import Testing

/// Flow outcomes in the flow journal: kept across a restart until their `keepUntil`, kept by a rewrite,
/// and a journal of the version before outcomes still opens.
struct JournalFlowOutcomeTests {
    static func outcome(_ flow: PendingFlow, _ status: FlowOutcome.Status, keepFor seconds: Double = 600) -> FlowOutcome {
        FlowOutcome(
            state: flow.state, provider: flow.provider, status: status,
            accountID: status == .completed ? "github:42" : nil, error: status == .failed ? "access_denied" : nil,
            expiresAt: flow.expiresAt, endedAt: status == .pending ? nil : .fixture,
            keepUntil: Date.fixture.addingTimeInterval(seconds))
    }

    @Test func anOutcomeReplacesTheLastAndSurvivesARestartUntilItsKeepUntil() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try JournalFlowStore(directory: directory, durable: false)
            let flow = PendingFlow.make(state: PendingFlow.randomState())
            try await store.put(flow)
            try await store.record(Self.outcome(flow, .pending, keepFor: 1200))
            _ = try await store.take(state: flow.state, now: .fixture)
            let completed = Self.outcome(flow, .completed)
            try await store.record(completed)
            #expect(try await store.outcome(state: flow.state, now: .fixture) == completed)

            let reopened = try JournalFlowStore(directory: directory, durable: false, now: Date.fixture.addingTimeInterval(599))
            #expect(try await reopened.outcome(state: flow.state, now: Date.fixture.addingTimeInterval(599)) == completed)
            #expect(try await reopened.outcome(state: flow.state, now: Date.fixture.addingTimeInterval(600)) == nil)
            let later = try JournalFlowStore(directory: directory, durable: false, now: Date.fixture.addingTimeInterval(600))
            #expect(try await later.outcome(state: flow.state, now: Date.fixture) == nil)
            #expect(!(String(decoding: FileProbe.bytes(later.journalPath) ?? [], as: UTF8.self).contains("outcome")))
        }
    }

    @Test func anOutcomeHoldsNoSecretOfItsFlow() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try JournalFlowStore(directory: directory, durable: false)
            let flow = PendingFlow.make(state: PendingFlow.randomState())
            try await store.record(Self.outcome(flow, .failed))
            let text = String(decoding: FileProbe.bytes(store.journalPath) ?? [], as: UTF8.self)
            #expect(text.contains("\"outcome\"") && text.contains("access_denied"))
            #expect(!text.contains("verifier-SENTINEL") && !text.contains("cookie-hash"))
        }
    }

    @Test func aRewriteKeepsLiveOutcomesAndDropsThosePurgedForAge() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try JournalFlowStore(directory: directory, durable: false, compactionThreshold: 4096)
            let live = PendingFlow.make(state: PendingFlow.randomState())
            let old = PendingFlow.make(state: PendingFlow.randomState())
            try await store.record(Self.outcome(live, .completed, keepFor: 5000))
            try await store.record(Self.outcome(old, .failed, keepFor: 10))
            // Forgotten for age, then enough dead lines for a rewrite.
            _ = try await store.purgeExpired(now: Date.fixture.addingTimeInterval(11))
            #expect(try await store.outcome(state: old.state, now: .fixture) == nil)
            for _ in 0..<40 {
                let flow = PendingFlow.make(state: PendingFlow.randomState())
                try await store.put(flow)
                _ = try await store.take(state: flow.state, now: .fixture)
            }
            let lines = String(decoding: FileProbe.bytes(store.journalPath) ?? [], as: UTF8.self).split(separator: "\n")
            #expect(lines.count < 40, "the journal was rewritten")
            #expect(lines.contains { $0.contains(live.state) } && !lines.contains { $0.contains(old.state) })
            let reopened = try JournalFlowStore(directory: directory, durable: false, now: .fixture)
            #expect(try await reopened.outcome(state: live.state, now: .fixture)?.status == .completed)
            #expect(try await reopened.outcome(state: old.state, now: .fixture) == nil)
        }
    }

    @Test func theSignInsOfAFlowTTLAreKeptAndThenForgottenAtThePurge() async throws {
        // What a sign-in leaves in memory: its flow goes at the callback, its outcome stays until `keepUntil`
        // (the callback plus the flow TTL), and the purge after that forgets it.
        try await TemporaryDirectory.with { directory in
            let store = try JournalFlowStore(directory: directory, durable: false, maxPending: 100)
            for round in 0..<3 {
                let endedAt = Date.fixture.addingTimeInterval(Double(round) * 1000)
                for _ in 0..<500 {
                    let flow = PendingFlow.make(state: PendingFlow.randomState())
                    try await store.put(flow)
                    try await store.record(.pending(flow, retention: 600))
                    #expect(try await store.take(state: flow.state, now: .fixture) != nil)
                    try await store.record(
                        FlowOutcome(
                            state: flow.state, provider: flow.provider, status: .completed, accountID: "github:42",
                            expiresAt: flow.expiresAt, endedAt: endedAt, keepUntil: endedAt.addingTimeInterval(600)))
                }
                // None pending; of the 500 outcomes, at most the cap (twice the flows', 200) is kept, those due first
                // forgotten a sixteenth of the cap at a time.
                let kept = store.outcomeCount
                #expect(store.pendingCount == 0 && (200 - 200 / 16)...200 ~= kept)
                _ = try await store.purgeExpired(now: endedAt.addingTimeInterval(599))
                #expect(store.outcomeCount == kept)
                _ = try await store.purgeExpired(now: endedAt.addingTimeInterval(600))
                #expect(store.outcomeCount == 0 && store.pendingCount == 0)
            }
        }
    }

    @Test func pastTheCapTheOutcomesKeptShortestGoFirst() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try JournalFlowStore(directory: directory, durable: false, maxPending: 100, maxOutcomes: 16)
            let flows = (0..<17).map { _ in PendingFlow.make(state: PendingFlow.randomState()) }
            for (i, flow) in flows.enumerated() { try await store.record(Self.outcome(flow, .completed, keepFor: 100 + Double(i))) }
            #expect(try await store.outcome(state: flows[0].state, now: .fixture) == nil)
            #expect(try await store.outcome(state: flows[16].state, now: .fixture) != nil)
            #expect(try await store.outcome(state: flows[1].state, now: .fixture) != nil)
        }
    }

    /// A journal as the version before outcomes wrote it: put and take lines only.
    @Test func aJournalOfThePreviousVersionOpensWithItsFlowsAndNoOutcomes() async throws {
        try await TemporaryDirectory.with { directory in
            try FileManager.default.createDirectory(atPath: directory + "/flows", withIntermediateDirectories: true)
            let pending = "c3RhdGUtcGVuZGluZy0xMjM0NTY3ODkw"
            let taken = "c3RhdGUtdGFrZW4tMTIzNDU2Nzg5MA"
            func put(_ state: String) -> String {
                "{\"put\":{\"binding\":\"api\",\"code_verifier\":\"v-\(state)\",\"created_at\":\"2026-01-01T00:00:00Z\","
                    + "\"expires_at\":\"2126-01-01T00:00:00Z\",\"provider\":\"github\",\"state\":\"\(state)\",\"version\":1}}\n"
            }
            let journal = put(pending) + put(taken) + "{\"take\":\"\(taken)\"}\n"
            try Data(journal.utf8).write(to: URL(fileURLWithPath: directory + "/flows/journal.jsonl"))

            let store = try JournalFlowStore(directory: directory, durable: false)
            #expect(store.discardedAtOpen == 0 && store.pendingCount == 1)
            #expect(try await store.outcome(state: pending, now: .fixture) == nil)
            #expect(try await store.take(state: pending, now: .fixture)?.codeVerifier?.value == "v-" + pending)
        }
    }
}
