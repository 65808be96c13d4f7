import BrokerCore
import Foundation
import Testing

/// Opens an outbox on one backing store; calling it again on the same store simulates a restart (or another replica, on Redis).
public typealias OutboxOpener = @Sendable () throws -> any WebhookOutbox

/// The behaviour every ``WebhookOutbox`` must show, written once for the file journal and Redis.
///
/// Each function gets an opener for a fresh, empty backing store. Times are
/// fixed dates, never the wall clock, so leases and due times are exact.
public enum WebhookOutboxConformance {
    /// A delivery as the sink makes it, due at `at`.
    public static func delivery(
        _ event: String = "evt_" + String(repeating: "ab", count: 16), index: Int = 0,
        type: BrokerEventType = .accountConnected, account: String? = "acme:4242",
        url: String = "http://127.0.0.1:9/hooks", at: Date = .fixture
    ) -> WebhookDelivery {
        WebhookDelivery(
            id: "\(event).\(index)", eventID: event, eventType: type.rawValue, accountID: account, url: url,
            body: "{\"id\":\"\(event)\",\"type\":\"\(type.rawValue)\"}", enqueuedAt: at)
    }

    /// An event id made of `n`.
    public static func eventID(_ n: Int) -> String {
        "evt_" + String(format: "%032x", n)
    }

    /// Appended deliveries are claimed earliest due first, once; completed ones are gone, also after a restart.
    public static func appendClaimComplete(_ open: OutboxOpener) async throws {
        let outbox = try open()
        let first = delivery(eventID(1), at: .fixture)
        let second = delivery(eventID(2), at: Date.fixture.addingTimeInterval(1))
        try await outbox.append([second])
        try await outbox.append([first])
        #expect(try await outbox.stats() == WebhookOutboxStats(pending: 2, dropped: 0, oldestPendingEnqueuedAt: .fixture))
        // Nothing is due before its time.
        #expect(try await outbox.claim(limit: 10, now: Date.fixture.addingTimeInterval(-1), lease: 30).isEmpty)
        let leases = try await outbox.claim(limit: 10, now: Date.fixture.addingTimeInterval(5), lease: 30)
        #expect(leases.map(\.delivery) == [first, second])
        // Leased deliveries are not handed out again while the lease holds.
        #expect(try await outbox.claim(limit: 10, now: Date.fixture.addingTimeInterval(6), lease: 30).isEmpty)
        try await outbox.complete(leases[0])
        #expect(try await outbox.stats().pending == 1)
        let reopened = try open()
        #expect(try await reopened.list(limit: 10).pending.map(\.id) == [second.id])
    }

    /// A lease that runs out makes its delivery due again for anyone, and the old holder can no longer settle it.
    public static func expiredLeaseIsTakenOver(_ open: OutboxOpener) async throws {
        let outbox = try open()
        let item = delivery(eventID(3))
        try await outbox.append([item])
        let first = try #require(try await outbox.claim(limit: 1, now: .fixture, lease: 10).first)
        #expect(try await outbox.claim(limit: 1, now: Date.fixture.addingTimeInterval(9), lease: 10).isEmpty)
        let second = try #require(try await outbox.claim(limit: 1, now: Date.fixture.addingTimeInterval(11), lease: 10).first)
        #expect(second.delivery.id == item.id)
        #expect(second.token != first.token)
        // The first holder's failure report is ignored: it no longer holds the lease.
        var stale = item
        stale.attempts = 1
        stale.nextAttemptAt = Date.fixture.addingTimeInterval(1000)
        try await outbox.reschedule(first, as: stale)
        var current = item
        current.attempts = 1
        current.lastError = "HTTP 500"
        current.nextAttemptAt = Date.fixture.addingTimeInterval(20)
        try await outbox.reschedule(second, as: current)
        #expect(try await outbox.list(limit: 10).pending == [current])
        #expect(try await outbox.claim(limit: 1, now: Date.fixture.addingTimeInterval(19), lease: 10).isEmpty)
        #expect(try await outbox.claim(limit: 1, now: Date.fixture.addingTimeInterval(20), lease: 10).map(\.delivery) == [current])
    }

    /// A dropped delivery is listed as dropped, not claimed, and a replay makes it due now with a fresh window; by delivery or event id.
    public static func dropListReplay(_ open: OutboxOpener) async throws {
        let outbox = try open()
        let event = eventID(4)
        let items = [delivery(event, index: 0), delivery(event, index: 1, url: "http://127.0.0.1:9/other")]
        try await outbox.append(items)
        let leases = try await outbox.claim(limit: 10, now: .fixture, lease: 10)
        #expect(leases.count == 2)
        for lease in leases {
            var dropped = lease.delivery
            dropped.attempts = 7
            dropped.lastError = "timeout"
            dropped.droppedAt = Date.fixture.addingTimeInterval(1)
            try await outbox.drop(lease, as: dropped)
        }
        let listing = try await outbox.list(limit: 10)
        #expect(listing.pending.isEmpty)
        #expect(Set(listing.dropped.map(\.id)) == Set(items.map(\.id)))
        #expect(listing.stats == WebhookOutboxStats(pending: 0, dropped: 2, oldestPendingEnqueuedAt: nil))
        #expect(try await outbox.claim(limit: 10, now: Date.fixture.addingTimeInterval(100), lease: 10).isEmpty)
        let later = Date.fixture.addingTimeInterval(3600)
        #expect(try await outbox.replay(id: items[1].id, now: later) == 1)
        #expect(try await open().list(limit: 10).pending.map(\.id) == [items[1].id])
        #expect(try await outbox.replay(id: event, now: later) == 2)
        let replayed = try await outbox.claim(limit: 10, now: later, lease: 10).map(\.delivery)
        #expect(Set(replayed.map(\.id)) == Set(items.map(\.id)))
        for item in replayed {
            #expect(item.attempts == 0 && item.droppedAt == nil && item.enqueuedAt == later && item.nextAttemptAt == later)
        }
        #expect(try await outbox.replay(id: eventID(99), now: later) == 0)
        #expect(try await outbox.replay(id: eventID(99) + ".0", now: later) == 0)
    }

    /// Many concurrent appends are all durable and each is claimed exactly once, even by several outboxes at once.
    public static func concurrentAppendsAndClaims(_ open: OutboxOpener) async throws {
        let outbox = try open()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for n in 0..<100 {
                group.addTask { try await outbox.append([delivery(eventID(1000 + n))]) }
            }
            try await group.waitForAll()
        }
        #expect(try await open().stats().pending == 100)
        // On Redis several outboxes are several replicas; on files one process owns the journal, so they share one.
        let claimers = (0..<4).map { _ in outbox }
        let claimed = try await withThrowingTaskGroup(of: [String].self) { group in
            for claimer in claimers {
                group.addTask {
                    var ids: [String] = []
                    while true {
                        let leases = try await claimer.claim(limit: 7, now: Date.fixture.addingTimeInterval(1), lease: 60)
                        if leases.isEmpty { return ids }
                        ids += leases.map(\.delivery.id)
                    }
                }
            }
            var all: [String] = []
            for try await ids in group { all += ids }
            return all
        }
        #expect(claimed.count == 100)
        #expect(Set(claimed).count == 100)
    }

    /// The stored delivery keeps every field through a reschedule and a restart.
    public static func fieldsSurviveRestart(_ open: OutboxOpener) async throws {
        let outbox = try open()
        var item = delivery(eventID(5), type: .flowFailed, account: nil, url: "https://hooks.example.com/in?token=abc")
        item.body = "{\"data\":{\"message\":\"quotes \\\" and é and \\n\"}}"
        try await outbox.append([item])
        let lease = try #require(try await outbox.claim(limit: 1, now: .fixture, lease: 10).first)
        #expect(lease.delivery == item)
        item.attempts = 3
        item.lastError = "connection refused"
        item.nextAttemptAt = Date.fixture.addingTimeInterval(40.5)
        try await outbox.reschedule(lease, as: item)
        #expect(try await open().list(limit: 10).pending == [item])
    }
}
