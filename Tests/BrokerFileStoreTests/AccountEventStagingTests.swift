import BrokerCore
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerFileStore

/// The file store writes an account change and its event in one step: staged in the outbox journal, then the account
/// file, then a commit. A crash at each step leaves the event delivered exactly when the change became durable.
struct AccountEventStagingTests {
    /// The account store, outbox and sink of one data directory, as a broker opens them at start.
    struct Store {
        let accounts: JSONFileAccountRepository
        let outbox: JournalWebhookOutbox
        let sink: OutboxEventSink

        init(_ directory: String) throws {
            accounts = try JSONFileAccountRepository(directory: directory)
            outbox = try JournalWebhookOutbox(directory: directory, now: .fixture)
            accounts.recordEvents(in: outbox)
            sink = OutboxEventSink(outbox: outbox, urls: ["http://127.0.0.1:9/hooks"], now: { .fixture }, wallClock: { .fixture })
        }

        /// Writes `account` with `account.connected` (or `.reconnected`) through the staging protocol.
        @discardableResult
        func connect(_ account: Account) async throws(StoreError) -> Account? {
            try await accounts.update(id: account.accountID, reporting: connected, to: sink) { _ in account }
        }

        /// Removes account `id` with `account.deleted`.
        @discardableResult
        func delete(_ id: AccountID) async throws(StoreError) -> Account? {
            try await accounts.update(id: id, reporting: deleted, to: sink) { _ in nil }
        }

        /// The event types the dispatcher may deliver now, by account id.
        func deliverable() async throws -> [String] {
            try await outbox.claim(limit: 100, now: Date.fixture.addingTimeInterval(1), lease: 60).map {
                "\($0.delivery.eventType) \($0.delivery.accountID ?? "-")"
            }.sorted()
        }

        /// The journal's lines, each reduced to its kind.
        func journalKinds() throws -> [String] {
            try String(contentsOfFile: outbox.journalPath, encoding: .utf8).split(separator: "\n").map { line in
                String(line.dropFirst(2).prefix { $0 != "\"" })
            }
        }
    }

    static let connected: AccountChangeEvent = { before, after in
        guard let after else { return nil }
        return (before == nil ? .accountConnected : .accountReconnected, BrokerEventData(account: after))
    }

    static let deleted: AccountChangeEvent = { before, after in
        guard let before, after == nil else { return nil }
        return (.accountDeleted, BrokerEventData(account: before, status: "deleted"))
    }

    var connected: AccountChangeEvent { Self.connected }
    var deleted: AccountChangeEvent { Self.deleted }

    @Test func aChangeIsStagedWrittenThenCommittedAndDeliveredOnce() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try Store(directory)
            try await store.connect(.make(uid: "1"))
            #expect(try store.journalKinds() == ["stage", "commit"])
            #expect(try await store.deliverable() == ["account.connected github:1"])
            // An unchanged account writes no file; its event is appended on its own, already deliverable.
            try await store.connect(.make(uid: "1"))
            #expect(try store.journalKinds() == ["stage", "commit", "put"])
            try await store.delete("github:1")
            #expect(try store.journalKinds() == ["stage", "commit", "put", "stage", "commit"])
            #expect(try await store.deliverable() == ["account.deleted github:1", "account.reconnected github:1"])
            #expect(try await store.accounts.get(id: "github:1") == nil)
        }
    }

    @Test func aCrashAfterStagingLeavesNeitherTheChangeNorItsEvent() async throws {
        try await TemporaryDirectory.with { directory in
            do {
                let store = try Store(directory)
                store.accounts.crashPoints.withLock { $0 = [.staged] }
                await #expect(throws: StoreError.self) { try await store.connect(.make(uid: "2")) }
                // Staged is not deliverable, and not counted.
                #expect(try await store.deliverable() == [])
                #expect(try await store.outbox.stats().pending == 0)
            }
            let restarted = try Store(directory)
            #expect(restarted.outbox.stagedAtOpen == (committed: 0, dropped: 1))
            #expect(try await restarted.accounts.get(id: "github:2") == nil)
            #expect(try await restarted.deliverable() == [])
        }
    }

    @Test func aCrashAfterTheAccountWriteDeliversTheEventAfterRestart() async throws {
        try await TemporaryDirectory.with { directory in
            do {
                let store = try Store(directory)
                store.accounts.crashPoints.withLock { $0 = [.accountWritten] }
                await #expect(throws: StoreError.self) { try await store.connect(.make(uid: "3")) }
                #expect(try await store.deliverable() == [])
            }
            let restarted = try Store(directory)
            #expect(restarted.outbox.stagedAtOpen == (committed: 1, dropped: 0))
            #expect(try await restarted.accounts.get(id: "github:3") != nil)
            #expect(try await restarted.deliverable() == ["account.connected github:3"])
            // Recovery's decision is durable: the rewritten journal holds a plain put.
            #expect(try restarted.journalKinds() == ["put"])
        }
    }

    @Test func aDeletionIsDecidedByWhetherTheFileIsGone() async throws {
        try await TemporaryDirectory.with { directory in
            do {
                let store = try Store(directory)
                try await store.accounts.put(.make(uid: "4"))
                try await store.accounts.put(.make(uid: "5"))
                store.accounts.crashPoints.withLock { $0 = [.accountWritten] }
                await #expect(throws: StoreError.self) { try await store.delete("github:4") }
                store.accounts.crashPoints.withLock { $0 = [.staged] }
                await #expect(throws: StoreError.self) { try await store.delete("github:5") }
            }
            let restarted = try Store(directory)
            #expect(restarted.outbox.stagedAtOpen == (committed: 1, dropped: 1))
            #expect(try await restarted.accounts.get(id: "github:4") == nil)
            #expect(try await restarted.accounts.get(id: "github:5") != nil)
            #expect(try await restarted.deliverable() == ["account.deleted github:4"])
        }
    }

    @Test func aCrashAfterStagingAChangeOfAStoredAccountLeavesItAsItWas() async throws {
        try await TemporaryDirectory.with { directory in
            do {
                let store = try Store(directory)
                try await store.accounts.put(.make(uid: "10", scope: "old"))
                store.accounts.crashPoints.withLock { $0 = [.staged] }
                await #expect(throws: StoreError.self) { try await store.connect(.make(uid: "10", scope: "new")) }
            }
            let restarted = try Store(directory)
            #expect(restarted.outbox.stagedAtOpen == (committed: 0, dropped: 1))
            #expect(try await restarted.accounts.get(id: "github:10")?.scope == "old")
            #expect(try await restarted.deliverable() == [])
        }
    }

    @Test func aWrittenChangeWhoseCommitWasLostIsDeliveredThoughALaterWriteReplacedItsFile() async throws {
        try await TemporaryDirectory.with { directory in
            do {
                let store = try Store(directory)
                store.accounts.crashPoints.withLock { $0 = [.accountWritten] }
                await #expect(throws: StoreError.self) { try await store.connect(.make(uid: "11", scope: "a")) }
                // As after a power loss that took the unsynced commit line but kept a later write without an event.
                store.accounts.crashPoints.withLock { $0 = [] }
                _ = try await store.accounts.update(id: "github:11") { current in
                    var account = current
                    account?.scope = "refreshed"
                    return account
                }
            }
            let restarted = try Store(directory)
            #expect(restarted.outbox.stagedAtOpen == (committed: 1, dropped: 0))
            #expect(try await restarted.deliverable() == ["account.connected github:11"])
        }
    }

    @Test func aChangeTheFileCannotShowIsAppendedAsItsEventAlone() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try Store(directory)
            try await store.accounts.put(.make(uid: "12"))
            // Differs from the stored record only below the millisecond the file keeps: the same bytes.
            var again = Account.make(uid: "12")
            again.updatedAt = Date.fixture.addingTimeInterval(0.0001)
            try await store.connect(again)
            #expect(try store.journalKinds() == ["put"])
            #expect(try await store.deliverable() == ["account.reconnected github:12"])
        }
    }

    @Test func aFailedAccountWriteAbortsItsEvent() async throws {
        try await TemporaryDirectory.with { directory in
            do {
                let store = try Store(directory)
                store.accounts.crashPoints.withLock { $0 = [.accountWriteFails] }
                await #expect(throws: StoreError.self) { try await store.connect(.make(uid: "7")) }
                #expect(try store.journalKinds() == ["stage", "done"])
                #expect(try await store.deliverable() == [])
                #expect(try await store.accounts.get(id: "github:7") == nil)
            }
            let restarted = try Store(directory)
            #expect(restarted.outbox.stagedAtOpen == (committed: 0, dropped: 0))
            #expect(try await restarted.deliverable() == [])
        }
    }

    @Test func aStagedDeliveryOutlivesACompactionAndIsStillDecidedAtStart() async throws {
        try await TemporaryDirectory.with { directory in
            do {
                let store = try Store(directory)
                store.accounts.crashPoints.withLock { $0 = [.accountWritten] }
                await #expect(throws: StoreError.self) { try await store.connect(.make(uid: "8")) }
                try store.outbox.compact()
                #expect(try store.journalKinds() == ["stage"])
            }
            let restarted = try Store(directory)
            #expect(try await restarted.deliverable() == ["account.connected github:8"])
        }
    }

    @Test func aJournalWrittenByThePreviousVersionIsRead() async throws {
        try await TemporaryDirectory.with { directory in
            // Lines as the version before staging wrote them: puts and dones only.
            let body =
                #"{\"created_at\":\"2026-11-30T08:00:00Z\",\"data\":{\"account_id\":\"github:9\"},\"id\":\"evt_0a\",\"type\":\"account.connected\"}"#
            let lines = [
                #"{"put":{"account_id":"github:9","attempts":0,"body":"\#(body)","enqueued_at":1796025600000,"event_id":"evt_0a","id":"evt_0a.0","next_attempt_at":1796025600000,"type":"account.connected","url":"http://127.0.0.1:9/hooks"}}"#,
                #"{"put":{"account_id":"github:8","attempts":0,"body":"{}","enqueued_at":1796025600000,"event_id":"evt_0b","id":"evt_0b.0","next_attempt_at":1796025600000,"type":"account.deleted","url":"http://127.0.0.1:9/hooks"}}"#,
                #"{"done":"evt_0b.0"}"#,
            ]
            try FileManager.default.createDirectory(atPath: directory + "/webhooks", withIntermediateDirectories: true)
            try (lines.joined(separator: "\n") + "\n").write(
                toFile: directory + "/webhooks/outbox.jsonl", atomically: true, encoding: .utf8)
            let store = try Store(directory)
            #expect(store.outbox.damagedLinesAtOpen == 0)
            #expect(store.outbox.stagedAtOpen == (committed: 0, dropped: 0))
            let leases = try await store.outbox.claim(limit: 10, now: Date.fixture.addingTimeInterval(1), lease: 60)
            #expect(leases.map(\.delivery.id) == ["evt_0a.0"])
            #expect(leases.first?.delivery.body.contains("github:9") == true)
        }
    }
}
