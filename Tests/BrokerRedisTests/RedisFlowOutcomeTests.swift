import BrokerCore
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerRedis

/// Flow outcomes in Redis: one key per state with a TTL to its `keepUntil`, readable by any client.
struct RedisFlowOutcomeTests {
    static func outcome(state: String = PendingFlow.randomState(), keepFor seconds: Double = 600) -> FlowOutcome {
        FlowOutcome(
            state: state, provider: "github", status: .completed, accountID: "github:42", endUserID: "user-42",
            expiresAt: Date.fixture.addingTimeInterval(600), endedAt: .fixture, keepUntil: Date.fixture.addingTimeInterval(seconds))
    }

    @Test func anOutcomeWrittenByOneClientIsReadByAnotherUntilItsKeepUntil() async throws {
        try await RedisServer.with { server async throws in
            let a = RedisFlowStore(client: server.client(), now: { .fixture })
            let b = RedisFlowStore(client: server.client(), now: { .fixture })
            let outcome = Self.outcome()
            try await a.record(outcome)
            #expect(try await b.outcome(state: outcome.state, now: .fixture) == outcome)
            #expect(try await b.outcome(state: outcome.state, now: Date.fixture.addingTimeInterval(600)) == nil)
            #expect(try await b.outcome(state: PendingFlow.randomState(), now: .fixture) == nil)
            #expect(try await b.outcome(state: "short", now: .fixture) == nil)
        }
    }

    @Test func theTTLRunsToTheOutcomesKeepUntil() async throws {
        try await RedisServer.with { server async throws in
            let client = server.client()
            let store = RedisFlowStore(client: client, now: { Date.fixture.addingTimeInterval(100) })
            let outcome = Self.outcome(keepFor: 700)
            try await store.record(outcome)
            let remaining = try #require(try await client.command("PTTL", "tb:flow-outcome:\(outcome.state)").integer)
            #expect((590_000...600_000).contains(remaining), "PTTL \(remaining)")
            // A later outcome of the same state replaces it.
            var failed = outcome
            failed.status = .failed
            failed.accountID = nil
            failed.error = "upstream_error"
            try await store.record(failed)
            #expect(try await store.outcome(state: outcome.state, now: .fixture) == failed)
        }
    }
}
