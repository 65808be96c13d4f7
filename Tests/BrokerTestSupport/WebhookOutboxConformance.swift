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
        type: BrokerEventType = .accountConnected, account: AccountID? = "acme:4242",
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
        // The second lease is long enough that a store's own clock (Redis's) never ends it before the reschedule below.
        let second = try #require(try await outbox.claim(limit: 1, now: Date.fixture.addingTimeInterval(11), lease: 600).first)
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
        // A lease long enough for any machine: a store whose leases run on its own clock (Redis's) must not see this
        // one end before the drops below.
        let leases = try await outbox.claim(limit: 10, now: .fixture, lease: 600)
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
        // Long enough that a store's own clock (Redis's) never ends it before the reschedule.
        let lease = try #require(try await outbox.claim(limit: 1, now: .fixture, lease: 600).first)
        #expect(lease.delivery == item)
        item.attempts = 3
        item.lastError = "connection refused"
        item.nextAttemptAt = Date.fixture.addingTimeInterval(40.5)
        try await outbox.reschedule(lease, as: item)
        #expect(try await open().list(limit: 10).pending == [item])
    }

    /// Listing pages walk each list once, in its order (pending earliest due first, dropped latest first), and a
    /// delivery settled between pages does not make the next page skip or repeat others.
    public static func pagesWalkEachListOnceInOrder(_ open: OutboxOpener) async throws {
        let outbox = try open()
        // Due times out of enqueue order, two sharing a millisecond.
        let offsets: [Double] = [9, 3, 3, 14, 1, 7, 20, 5, 11, 2, 17, 8, 6, 4, 13, 10, 12, 15, 16, 18]
        var items: [WebhookDelivery] = []
        for (n, offset) in offsets.enumerated() {
            var item = delivery(eventID(200 + n), at: .fixture)
            item.nextAttemptAt = Date.fixture.addingTimeInterval(offset)
            items.append(item)
        }
        try await outbox.append(items)
        // Drop the five due first, each a second apart.
        let leases = try await outbox.claim(limit: 5, now: Date.fixture.addingTimeInterval(4), lease: 60)
        #expect(leases.count == 5)
        for (n, lease) in leases.enumerated() {
            var dropped = lease.delivery
            dropped.droppedAt = Date.fixture.addingTimeInterval(100 + Double(n))
            try await outbox.drop(lease, as: dropped)
        }
        let droppedIDs = Set(leases.map(\.delivery.id))
        let pendingOrder = items.filter { !droppedIDs.contains($0.id) }
            .sorted { (WebhookDelivery.milliseconds($0.nextAttemptAt), $0.id) < (WebhookDelivery.milliseconds($1.nextAttemptAt), $1.id) }
            .map(\.id)
        var pending: [String] = []
        var dropped: [String] = []
        var cursor: WebhookListCursor?
        var pages = 0
        repeat {
            let page = try await outbox.list(limit: 4, cursor: cursor)
            #expect(page.pending.count <= 4 && page.dropped.count <= 4)
            #expect(page.stats.pending == (pages == 0 ? 15 : 14) && page.stats.dropped == 5)
            pending += page.pending.map(\.id)
            dropped += page.dropped.map(\.id)
            cursor = page.next.flatMap { WebhookListCursor(encoded: $0.encoded) }
            #expect(cursor == page.next)
            pages += 1
            if pages == 1 {
                // The first pending delivery shown is taken and completed before the next page.
                let first = try #require(try await outbox.claim(limit: 1, now: Date.fixture.addingTimeInterval(5), lease: 60).first)
                #expect(first.delivery.id == pendingOrder[0])
                try await outbox.complete(first)
            }
        } while cursor != nil && pages < 10
        #expect(pages == 4)
        #expect(pending == pendingOrder)
        #expect(dropped == leases.reversed().map(\.delivery.id))
    }

    /// Claims take the earliest due first at any moment, also after reschedules move deliveries around.
    public static func claimsFollowTheDueOrder(_ open: OutboxOpener) async throws {
        let outbox = try open()
        var items: [WebhookDelivery] = []
        for n in 0..<30 {
            var item = delivery(eventID(300 + n), at: .fixture)
            item.nextAttemptAt = Date.fixture.addingTimeInterval(Double((n * 7) % 30))
            items.append(item)
        }
        try await outbox.append(items.shuffled())
        let expected = items.sorted { ($0.nextAttemptAt, $0.id) < ($1.nextAttemptAt, $1.id) }.map(\.id)
        var claimed: [String] = []
        let now = Date.fixture.addingTimeInterval(100)
        // Each third one fails and is due again after everything else.
        var retried: [String] = []
        while true {
            let leases = try await outbox.claim(limit: 4, now: now, lease: 60)
            if leases.isEmpty { break }
            for lease in leases {
                claimed.append(lease.delivery.id)
                if claimed.count % 3 == 0 && lease.delivery.attempts == 0 {
                    var again = lease.delivery
                    again.attempts = 1
                    again.nextAttemptAt = Date.fixture.addingTimeInterval(50)
                    try await outbox.reschedule(lease, as: again)
                    retried.append(again.id)
                } else {
                    try await outbox.complete(lease)
                }
            }
        }
        #expect(claimed.count == 30 + retried.count)
        #expect(Array(claimed.prefix(30)) == expected)
        // Due at the same time, they come by id.
        #expect(Array(claimed.dropFirst(30)) == retried.sorted())
        #expect(try await outbox.stats().pending == 0)
    }

    /// A hold lets one delivery to a down receiver through and sets the others aside without changing them, while
    /// other receivers' deliveries are claimed in full; one whose retry window ended is let through.
    public static func holdsLetAProbeThroughAndSetTheRestAside(_ open: OutboxOpener) async throws {
        let outbox = try open()
        let down = "http://127.0.0.1:9/down"
        let up = "http://127.0.0.1:9/up"
        var items: [WebhookDelivery] = []
        for n in 0..<10 {
            items.append(delivery(eventID(400 + n), url: down, at: Date.fixture.addingTimeInterval(Double(n))))
            items.append(delivery(eventID(400 + n), index: 1, url: up, at: Date.fixture.addingTimeInterval(Double(n))))
        }
        try await outbox.append(items)
        let now = Date.fixture.addingTimeInterval(20)
        let windowEndedBefore = Date.fixture.addingTimeInterval(-1)
        let probe = WebhookReceiverHold(leases: 1, until: now.addingTimeInterval(30), windowEndedBefore: windowEndedBefore)
        let first = try await outbox.claim(limit: 100, now: now, lease: 60, holding: [down: probe])
        #expect(first.filter { $0.delivery.url == down }.map(\.delivery.id) == [items[0].id])
        #expect(first.filter { $0.delivery.url == up }.count == 10)
        // Set aside: not claimed again before the hold ends, even with no hold given.
        #expect(try await outbox.claim(limit: 100, now: now.addingTimeInterval(10), lease: 60).isEmpty)
        // Their stored state is untouched.
        let listed = try await outbox.list(limit: 100).pending.filter { $0.url == down && $0.id != items[0].id }
        #expect(listed.count == 9 && listed.allSatisfy { $0.attempts == 0 && $0.nextAttemptAt == $0.enqueuedAt })
        let later = try await outbox.claim(limit: 100, now: now.addingTimeInterval(31), lease: 60)
        #expect(Set(later.map(\.delivery.id)) == Set(listed.map(\.id)))
        // A hold with no lease still lets through those whose window has ended.
        for lease in later { try await outbox.reschedule(lease, as: lease.delivery) }
        let ended = WebhookReceiverHold(
            leases: 0, until: now.addingTimeInterval(200), windowEndedBefore: Date.fixture.addingTimeInterval(3))
        let expired = try await outbox.claim(limit: 100, now: now.addingTimeInterval(40), lease: 60, holding: [down: ended])
        #expect(
            Set(expired.map(\.delivery.id))
                == Set(
                    items.filter { $0.url == down && $0.enqueuedAt < Date.fixture.addingTimeInterval(3) && $0.id != items[0].id }.map(\.id))
        )
    }
}
