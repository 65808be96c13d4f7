import BrokerCore
import BrokerTestSupport
import Foundation
import Glibc
import Testing

@testable import BrokerFileStore

/// The file store's webhook outbox: the shared outbox suite, then the journal's own promises.
struct JournalWebhookOutboxTests {
    private func conformance(_ check: (OutboxOpener) async throws -> Void) async throws {
        try await TemporaryDirectory.with { directory in
            try await check { try JournalWebhookOutbox(directory: directory + "/data", now: .fixture) }
        }
    }

    @Test func appendClaimComplete() async throws { try await conformance(WebhookOutboxConformance.appendClaimComplete) }
    @Test func expiredLeaseIsTakenOver() async throws { try await conformance(WebhookOutboxConformance.expiredLeaseIsTakenOver) }
    @Test func dropListReplay() async throws { try await conformance(WebhookOutboxConformance.dropListReplay) }
    @Test func concurrentAppendsAndClaims() async throws { try await conformance(WebhookOutboxConformance.concurrentAppendsAndClaims) }
    @Test func fieldsSurviveRestart() async throws { try await conformance(WebhookOutboxConformance.fieldsSurviveRestart) }
    @Test func pagesWalkEachListOnceInOrder() async throws { try await conformance(WebhookOutboxConformance.pagesWalkEachListOnceInOrder) }
    @Test func claimsFollowTheDueOrder() async throws { try await conformance(WebhookOutboxConformance.claimsFollowTheDueOrder) }
    @Test func holdsLetAProbeThroughAndSetTheRestAside() async throws {
        try await conformance(WebhookOutboxConformance.holdsLetAProbeThroughAndSetTheRestAside)
    }

    @Test func theJournalIsPrivateAndOneLinePerChange() async throws {
        try await TemporaryDirectory.with { directory in
            let outbox = try JournalWebhookOutbox(directory: directory, now: .fixture)
            let item = WebhookOutboxConformance.delivery(WebhookOutboxConformance.eventID(1))
            try await outbox.append([item])
            let lease = try #require(try await outbox.claim(limit: 1, now: .fixture, lease: 5).first)
            try await outbox.complete(lease)
            let text = try String(contentsOfFile: outbox.journalPath, encoding: .utf8)
            #expect(text.split(separator: "\n").count == 2)
            #expect(text.hasPrefix("{\"put\":{"))
            #expect(text.hasSuffix("{\"done\":\"\(item.id)\"}\n"))
            var status = stat()
            #expect(stat(outbox.journalPath, &status) == 0 && status.st_mode & 0o777 == 0o600)
            #expect(stat(directory + "/webhooks", &status) == 0 && status.st_mode & 0o777 == 0o700)
        }
    }

    @Test func aTornLastLineIsIgnoredAndADamagedLineSkipped() async throws {
        try await TemporaryDirectory.with { directory in
            let first = WebhookOutboxConformance.delivery(WebhookOutboxConformance.eventID(1))
            let second = WebhookOutboxConformance.delivery(WebhookOutboxConformance.eventID(2))
            let path = directory + "/webhooks/outbox.jsonl"
            do {
                let outbox = try JournalWebhookOutbox(directory: directory, now: .fixture)
                try await outbox.append([first])
                try await outbox.append([second])
            }
            var bytes = try #require(FileManager.default.contents(atPath: path))
            // A garbled block where a done line of the first might have been, and a put cut short by a crash.
            bytes += Data("{\"done\":\u{0}\u{0}\n".utf8) + Data("{\"put\":{\"id\":\"evt_".utf8)
            try bytes.write(to: URL(fileURLWithPath: path))
            let reopened = try JournalWebhookOutbox(directory: directory, now: .fixture)
            #expect(reopened.damagedLinesAtOpen == 1)
            // Both stay pending: skipping a damaged line can repeat a delivery, never lose one.
            #expect(Set(try await reopened.list(limit: 10).pending.map(\.id)) == [first.id, second.id])
            // The journal was rewritten whole: the damage and the torn tail are gone.
            let text = try String(contentsOfFile: path, encoding: .utf8)
            #expect(text.split(separator: "\n").count == 2 && text.hasSuffix("}\n"))
        }
    }

    @Test func aJournalOfMostlyFinishedDeliveriesIsCompacted() async throws {
        try await TemporaryDirectory.with { directory in
            let outbox = try JournalWebhookOutbox(directory: directory, compactionThreshold: 16 << 10, now: .fixture)
            let keep = WebhookOutboxConformance.delivery(WebhookOutboxConformance.eventID(0))
            try await outbox.append([keep])
            for n in 1...200 {
                try await outbox.append([WebhookOutboxConformance.delivery(WebhookOutboxConformance.eventID(n))])
                let leases = try await outbox.claim(limit: 10, now: .fixture, lease: 5)
                for lease in leases where lease.delivery.id != keep.id { try await outbox.complete(lease) }
            }
            let size = try #require(try FileManager.default.attributesOfItem(atPath: outbox.journalPath)[.size] as? Int)
            #expect(size < 16 << 10)
            #expect(try await JournalWebhookOutbox(directory: directory, now: .fixture).list(limit: 10).pending.map(\.id) == [keep.id])
        }
    }

    @Test func droppedDeliveriesAreForgottenAfterTheirKeepingTime() async throws {
        try await TemporaryDirectory.with { directory in
            let outbox = try JournalWebhookOutbox(directory: directory, now: .fixture)
            let item = WebhookOutboxConformance.delivery(WebhookOutboxConformance.eventID(1))
            try await outbox.append([item])
            let lease = try #require(try await outbox.claim(limit: 1, now: .fixture, lease: 5).first)
            var dropped = item
            dropped.droppedAt = .fixture
            try await outbox.drop(lease, as: dropped)
            #expect(try await JournalWebhookOutbox(directory: directory, now: .fixture).stats().dropped == 1)
            let later = Date.fixture.addingTimeInterval(WebhookRetention.droppedFor + 1)
            #expect(try await JournalWebhookOutbox(directory: directory, now: later).stats().dropped == 0)
        }
    }
}

extension JournalWebhookOutboxTests {
    /// A journal as the version before the due index wrote it (puts, a reschedule, a done, a dropped delivery, a
    /// staged one committed) loads into the same claims, listing and counts.
    @Test func aJournalOfTheEarlierVersionLoadsInDueOrder() async throws {
        try await TemporaryDirectory.with { directory in
            let lines = [
                #"{"put":{"account_id":"acme:1","attempts":0,"body":"{\"id\":\"evt_00000000000000000000000000000001\",\"type\":\"account.connected\"}","enqueued_at":1796025600000,"event_id":"evt_00000000000000000000000000000001","id":"evt_00000000000000000000000000000001.0","next_attempt_at":1796025600000,"type":"account.connected","url":"http://127.0.0.1:9/hooks"}}"#,
                #"{"put":{"account_id":"acme:2","attempts":0,"body":"{\"id\":\"evt_00000000000000000000000000000002\",\"type\":\"account.connected\"}","enqueued_at":1796025600000,"event_id":"evt_00000000000000000000000000000002","id":"evt_00000000000000000000000000000002.0","next_attempt_at":1796025610000,"type":"account.connected","url":"http://127.0.0.1:9/hooks"}}"#,
                #"{"put":{"account_id":"acme:3","attempts":0,"body":"{\"id\":\"evt_00000000000000000000000000000003\",\"type\":\"account.connected\"}","enqueued_at":1796025600000,"event_id":"evt_00000000000000000000000000000003","id":"evt_00000000000000000000000000000003.0","next_attempt_at":1796025600000,"type":"account.connected","url":"http://127.0.0.1:9/hooks"}}"#,
                #"{"put":{"account_id":"acme:1","attempts":1,"body":"{\"id\":\"evt_00000000000000000000000000000001\",\"type\":\"account.connected\"}","enqueued_at":1796025600000,"event_id":"evt_00000000000000000000000000000001","id":"evt_00000000000000000000000000000001.0","last_error":"HTTP 500","next_attempt_at":1796025630000,"type":"account.connected","url":"http://127.0.0.1:9/hooks"}}"#,
                #"{"done":"evt_00000000000000000000000000000003.0"}"#,
                #"{"put":{"account_id":"acme:4","attempts":9,"body":"{\"id\":\"evt_00000000000000000000000000000004\",\"type\":\"account.connected\"}","dropped_at":1796025605000,"enqueued_at":1796025600000,"event_id":"evt_00000000000000000000000000000004","id":"evt_00000000000000000000000000000004.0","last_error":"timeout","next_attempt_at":1796025600000,"type":"account.connected","url":"http://127.0.0.1:9/hooks"}}"#,
                #"{"stage":{"account":"acme:5","after":"abababababababababababababababababababababababababababababababab","before":"none"},"put":{"account_id":"acme:5","attempts":0,"body":"{\"id\":\"evt_00000000000000000000000000000005\",\"type\":\"account.connected\"}","enqueued_at":1796025600000,"event_id":"evt_00000000000000000000000000000005","id":"evt_00000000000000000000000000000005.0","next_attempt_at":1796025620000,"type":"account.connected","url":"http://127.0.0.1:9/hooks"}}"#,
                #"{"commit":"evt_00000000000000000000000000000005.0"}"#,
            ]
            try DataDirectory.prepare(directory)
            try DataDirectory.prepare(directory + "/webhooks")
            let path = directory + "/webhooks/" + JournalWebhookOutbox.journalName
            try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
            let outbox = try JournalWebhookOutbox(directory: directory, now: .fixture)
            #expect(outbox.damagedLinesAtOpen == 0)
            let id = { (n: Int) in WebhookOutboxConformance.eventID(n) + ".0" }
            #expect(try await outbox.stats() == WebhookOutboxStats(pending: 3, dropped: 1, oldestPendingEnqueuedAt: .fixture))
            let listing = try await outbox.list(limit: 2)
            #expect(listing.pending.map(\.id) == [id(2), id(5)])
            #expect(listing.dropped.map(\.id) == [id(4)] && listing.dropped.first?.lastError == "timeout")
            let rest = try await outbox.list(limit: 2, cursor: try #require(listing.next))
            #expect(rest.pending.map(\.id) == [id(1)] && rest.dropped.isEmpty && rest.next == nil)
            #expect(rest.pending.first?.attempts == 1 && rest.pending.first?.lastError == "HTTP 500")
            let claimed = try await outbox.claim(limit: 10, now: Date.fixture.addingTimeInterval(60), lease: 5)
            #expect(claimed.map(\.delivery.id) == [id(2), id(5), id(1)])
            #expect(
                claimed.first?.delivery
                    == WebhookOutboxConformance.delivery(WebhookOutboxConformance.eventID(2), account: "acme:2", at: .fixture).dueAt(
                        Date.fixture.addingTimeInterval(10)))
        }
    }
}

extension WebhookDelivery {
    /// This delivery due at `date`.
    fileprivate func dueAt(_ date: Date) -> WebhookDelivery {
        var copy = self
        copy.nextAttemptAt = date
        return copy
    }
}
