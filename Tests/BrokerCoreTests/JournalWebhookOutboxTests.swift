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
