import BrokerCore
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerFileStore

/// The flow journal and the webhook outbox journal keep their on-disk format byte for byte.
///
/// ``JournalFormatFixtures`` holds the bytes the version before the shared
/// journal component wrote for the same fixed sequence of changes: the same
/// changes must write the same bytes, and those bytes (with a torn last line
/// added, as a crash leaves it) must read back to the same flows, outcomes and
/// deliveries and be rewritten into the same compacted journal.
struct JournalFormatCompatibilityTests {
    // MARK: The fixed sequences

    /// A valid flow state (22 base64url characters) made of `letter`.
    static func state(_ letter: Character) -> String {
        "state-" + String(repeating: letter, count: 16)
    }

    /// The flow with state `letter`, created at the fixture date.
    static func flow(_ letter: Character, lifetime: TimeInterval = 600) -> PendingFlow {
        PendingFlow.make(state: state(letter), lifetime: lifetime)
    }

    /// The outcome of the flow with state `letter`.
    static func outcome(_ letter: Character, _ status: FlowOutcome.Status) -> FlowOutcome {
        FlowOutcome(
            state: state(letter), provider: "github", status: status, accountID: status == .completed ? "github:42" : nil,
            error: status == .failed ? "access_denied" : nil, expiresAt: Date.fixture.addingTimeInterval(600),
            endedAt: status == .pending ? nil : Date.fixture.addingTimeInterval(30), keepUntil: Date.fixture.addingTimeInterval(1200))
    }

    /// Puts, takes, outcomes and a purge on a fresh flow store in `directory`; returns the store.
    static func writeFlowJournal(in directory: String) async throws -> JournalFlowStore {
        let store = try JournalFlowStore(directory: directory, durable: false, now: .fixture)
        try await store.put(flow("a"))
        try await store.record(outcome("a", .pending))
        try await store.put(flow("b"))
        _ = try await store.take(state: state("a"), now: .fixture)
        try await store.record(outcome("a", .completed))
        try await store.put(flow("c", lifetime: 1))
        _ = try await store.purgeExpired(now: Date.fixture.addingTimeInterval(2))
        try await store.record(outcome("b", .failed))
        return store
    }

    /// Delivery `n` of the outbox sequence, enqueued `n` seconds after the fixture date.
    static func delivery(_ n: Int) -> WebhookDelivery {
        WebhookOutboxConformance.delivery(
            WebhookOutboxConformance.eventID(n), account: "acme:\(n)", at: Date.fixture.addingTimeInterval(Double(n)))
    }

    /// A staged change of account `acme:<n>` from no record to one.
    static func change(_ n: Int) -> StagedChange {
        StagedChange(account: "acme:\(n)", after: String(repeating: "ab", count: 32), before: StagedChange.none)
    }

    /// Appends, completes, reschedules, stages and commits, stages and aborts, drops and replays on a fresh outbox in
    /// `directory`; returns the outbox.
    static func writeOutboxJournal(in directory: String) async throws -> JournalWebhookOutbox {
        let outbox = try JournalWebhookOutbox(directory: directory, now: .fixture)
        let later = Date.fixture.addingTimeInterval(10)
        try await outbox.append([delivery(1), delivery(2)])
        let first = try #require(try await outbox.claim(limit: 1, now: later, lease: 5).first)
        try await outbox.complete(first)
        let second = try #require(try await outbox.claim(limit: 1, now: later, lease: 5).first)
        var retried = second.delivery
        retried.attempts = 1
        retried.lastError = "HTTP 500"
        retried.nextAttemptAt = Date.fixture.addingTimeInterval(40)
        try await outbox.reschedule(second, as: retried)
        try await outbox.stage([delivery(3)], for: change(3))
        await outbox.commit([delivery(3).id])
        try await outbox.stage([delivery(4)], for: change(4))
        await outbox.abort([delivery(4).id])
        try await outbox.append([delivery(5)])
        let leases = try await outbox.claim(limit: 10, now: later, lease: 5)
        let fifth = try #require(leases.first { $0.delivery.id == delivery(5).id })
        var dropped = fifth.delivery
        dropped.attempts = 9
        dropped.lastError = "timeout"
        dropped.droppedAt = Date.fixture.addingTimeInterval(20)
        try await outbox.drop(fifth, as: dropped)
        try await outbox.append([delivery(6)])
        #expect(try await outbox.replay(id: delivery(6).id, now: Date.fixture.addingTimeInterval(60)) == 1)
        return outbox
    }

    /// The lines of `bytes`, newline included, sorted: a flow journal's rewrite is in no particular order.
    static func sortedLines(_ bytes: [UInt8]) -> [String] {
        String(decoding: bytes, as: UTF8.self).split(separator: "\n").map { $0 + "\n" }.sorted()
    }

    // MARK: Flows

    @Test func theFlowStoreWritesTheBytesOfThePreviousVersion() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try await Self.writeFlowJournal(in: directory)
            let written = try #require(try DurableFile.read(store.journalPath))
            #expect(String(decoding: written, as: UTF8.self) == JournalFormatFixtures.flowJournal)
        }
    }

    /// A flow and its pending outcome put together write, in one write, the two lines a put and a record made apart wrote.
    @Test func aPutRecordingItsOutcomeWritesTheLinesOfAPutAndARecord() async throws {
        try await TemporaryDirectory.with { directory in
            let together = try JournalFlowStore(directory: directory + "/together", durable: false, now: .fixture)
            let apart = try JournalFlowStore(directory: directory + "/apart", durable: false, now: .fixture)
            try await together.put(Self.flow("a"), recording: Self.outcome("a", .pending), in: together)
            try await apart.put(Self.flow("a"))
            try await apart.record(Self.outcome("a", .pending))
            let written = try #require(try DurableFile.read(together.journalPath))
            #expect(written == (try DurableFile.read(apart.journalPath)))
            #expect(String(decoding: written, as: UTF8.self).split(separator: "\n").count == 2)
        }
    }

    @Test func aFlowJournalOfThePreviousVersionReadsBackAndIsRewrittenTheSame() async throws {
        try await TemporaryDirectory.with { directory in
            try DataDirectory.prepare(directory)
            try DataDirectory.prepare(directory + "/flows")
            let path = directory + "/flows/" + JournalFlowStore.journalName
            // A take of b cut short by a crash: never acknowledged, so b stays pending.
            let torn = JournalFormatFixtures.flowJournal + "{\"take\":\"" + Self.state("b").prefix(9)
            try DurableFile.write(Array(torn.utf8), to: path, sync: false)

            let store = try JournalFlowStore(directory: directory, durable: false, now: .fixture)
            #expect(store.discardedAtOpen == 0)
            #expect(store.pendingCount == 1)
            let rewritten = try #require(try DurableFile.read(path))
            #expect(Self.sortedLines(rewritten) == Self.sortedLines(Array(JournalFormatFixtures.flowJournalRewritten.utf8)))
            #expect(try await store.outcome(state: Self.state("a"), now: .fixture) == Self.outcome("a", .completed))
            #expect(try await store.outcome(state: Self.state("b"), now: .fixture) == Self.outcome("b", .failed))
            #expect(try await store.outcome(state: Self.state("c"), now: .fixture) == nil)
            #expect(try await store.take(state: Self.state("a"), now: .fixture) == nil)
            #expect(try await store.take(state: Self.state("c"), now: .fixture) == nil)
            #expect(try await store.take(state: Self.state("b"), now: .fixture) == Self.flow("b"))
        }
    }

    // MARK: Webhook outbox

    @Test func theOutboxWritesTheBytesOfThePreviousVersion() async throws {
        try await TemporaryDirectory.with { directory in
            let outbox = try await Self.writeOutboxJournal(in: directory)
            let written = try #require(try DurableFile.read(outbox.journalPath))
            #expect(String(decoding: written, as: UTF8.self) == JournalFormatFixtures.outboxJournal)
        }
    }

    @Test func anOutboxJournalOfThePreviousVersionReadsBackAndIsRewrittenTheSame() async throws {
        try await TemporaryDirectory.with { directory in
            try DataDirectory.prepare(directory)
            try DataDirectory.prepare(directory + "/webhooks")
            let path = directory + "/webhooks/" + JournalWebhookOutbox.journalName
            // A done line of delivery 2 cut short by a crash: never acknowledged, so it stays pending.
            let torn = JournalFormatFixtures.outboxJournal + "{\"done\":\"evt_0000"
            try DurableFile.write(Array(torn.utf8), to: path, sync: false)

            let outbox = try JournalWebhookOutbox(directory: directory, now: Date.fixture.addingTimeInterval(60))
            #expect(outbox.damagedLinesAtOpen == 0)
            #expect(outbox.stagedAtOpen == (committed: 0, dropped: 0))
            let rewritten = try #require(try DurableFile.read(path))
            #expect(String(decoding: rewritten, as: UTF8.self) == JournalFormatFixtures.outboxJournalRewritten)
            let listing = try await outbox.list(limit: 10)
            #expect(listing.pending.map(\.id) == [Self.delivery(3).id, Self.delivery(2).id, Self.delivery(6).id])
            #expect(listing.dropped.map(\.id) == [Self.delivery(5).id])
            let retried = listing.pending.first { $0.id == Self.delivery(2).id }
            #expect(retried?.attempts == 1 && retried?.lastError == "HTTP 500")
            #expect(listing.dropped.first?.lastError == "timeout")
        }
    }
}
