import BrokerCrypto
import BrokerFileStore
import BrokerTestSupport
import Foundation
import Synchronization
import Testing

@testable import BrokerCore

/// The dispatcher over a real journal outbox and an in-process receiver: signing, settling, retrying, giving up.
struct WebhookDispatcherTests {
    static let secret = Array("whsec-0123456789abcdef0123456789abcdef".utf8)
    static let url = "https://hooks.example/in"

    /// What the dispatcher reported, in order.
    final class Reports: Sendable {
        private let all = Mutex<[WebhookDispatcher.Report]>([])
        func append(_ report: WebhookDispatcher.Report) { all.withLock { $0.append(report) } }
        var results: [WebhookDispatcher.Report.Result] { all.withLock { $0.map(\.result) } }
        var count: Int { all.withLock { $0.count } }
    }

    static func with(
        policy: WebhookRetryPolicy = WebhookRetryPolicy(base: 0.05, cap: 0.2, retryFor: 60),
        urls: [String] = [url],
        _ body: (JournalWebhookOutbox, FakeUpstream, WebhookDispatcher, Reports) async throws -> Void
    ) async throws {
        try await TemporaryDirectory.with { directory in
            let outbox = try JournalWebhookOutbox(directory: directory)
            let upstream = FakeUpstream()
            let reports = Reports()
            let dispatcher = WebhookDispatcher(
                outbox: outbox, upstream: upstream,
                settings: WebhookDispatcher.Settings(secret: secret, urls: urls, policy: policy, attemptTimeout: 1),
                onReport: { reports.append($0) })
            dispatcher.start()
            do {
                try await body(outbox, upstream, dispatcher, reports)
            } catch {
                await dispatcher.stop()
                throw error
            }
            await dispatcher.stop()
        }
    }

    /// Records one event through a sink as the services would.
    static func record(_ outbox: some WebhookOutbox, _ dispatcher: WebhookDispatcher, urls: [String] = [url]) async throws {
        let sink = OutboxEventSink(outbox: outbox, urls: urls, now: { .fixture }, onAppend: { dispatcher.wake() })
        try await sink.record(.accountConnected, BrokerEventData(account: Account.make(uid: "7")))
    }

    @Test func aDeliveryIsSignedAndCompletedOnA2xx() async throws {
        try await Self.with { outbox, upstream, dispatcher, reports in
            await upstream.on(Self.url, respond: UpstreamResponse(status: 204))
            try await Self.record(outbox, dispatcher)
            #expect(await eventually { reports.count == 1 })
            #expect(reports.results == [.delivered])
            #expect(try await outbox.stats().pending == 0)
            let request = try #require(await upstream.requests.first)
            #expect(request.method == "POST")
            #expect(request.header("Content-Type") == "application/json")
            let body = String(decoding: request.body, as: UTF8.self)
            let id = try #require(request.header("Broker-Event-Id"))
            #expect(body.contains("\"id\":\"\(id)\"") && body.contains("\"type\":\"account.connected\""))
            #expect(request.header("Broker-Event-Type") == "account.connected")
            let signature = try #require(request.header("Broker-Signature"))
            #expect(WebhookSignature.verify(header: signature, secret: Self.secret, body: request.body, now: Date()))
            #expect(
                !WebhookSignature.verify(
                    header: signature, secret: Array("another-secret-another-secret-0000".utf8), body: request.body, now: Date()))
        }
    }

    @Test func threeFailuresThenSuccessDeliverTheSameEventFourTimes() async throws {
        try await Self.with { outbox, upstream, dispatcher, reports in
            let calls = Mutex(0)
            await upstream.on(Self.url) { _ in
                let n = calls.withLock {
                    $0 += 1; return $0
                }
                return n <= 2
                    ? .success(UpstreamResponse(status: 500)) : n == 3 ? .failure(.timeout) : .success(UpstreamResponse(status: 200))
            }
            try await Self.record(outbox, dispatcher)
            #expect(await eventually { reports.count == 4 })
            #expect(reports.results.last == .delivered)
            let requests = await upstream.requests
            #expect(requests.count == 4)
            #expect(Set(requests.map { $0.header("Broker-Event-Id") }).count == 1)
            #expect(Set(requests.map(\.body)).count == 1)
            #expect(try await outbox.stats().pending == 0)
        }
    }

    @Test func aDeliveryIsDroppedWhenItsRetryWindowEndsAndCanBeReplayed() async throws {
        try await Self.with(policy: WebhookRetryPolicy(base: 0.05, cap: 0.1, retryFor: 0.3)) { outbox, upstream, dispatcher, reports in
            await upstream.on(Self.url, fail: .transport(.connectRefused, "connection refused"))
            try await Self.record(outbox, dispatcher)
            #expect(await eventually { reports.results.last == .dropped })
            let listing = try await outbox.list(limit: 10)
            #expect(listing.pending.isEmpty && listing.dropped.count == 1)
            let dropped = try #require(listing.dropped.first)
            #expect(dropped.lastError == "connection refused" && dropped.attempts >= 1)
            await upstream.on(Self.url, respond: UpstreamResponse(status: 200))
            #expect(try await outbox.replay(id: dropped.eventID, now: Date()) == 1)
            dispatcher.wake()
            #expect(await eventually { reports.results.last == .delivered })
            #expect(try await outbox.stats() == WebhookOutboxStats(pending: 0, dropped: 0, oldestPendingEnqueuedAt: nil))
        }
    }

    @Test func eachURLGetsItsOwnDeliveryAndItsOwnRetries() async throws {
        let other = "https://other.example/in"
        try await Self.with(urls: [Self.url, other]) { outbox, upstream, dispatcher, reports in
            await upstream.on(Self.url, respond: UpstreamResponse(status: 200))
            let failures = Mutex(0)
            await upstream.on(other) { _ in
                failures.withLock {
                    $0 += 1; return $0
                } <= 2 ? .success(UpstreamResponse(status: 503)) : .success(UpstreamResponse(status: 200))
            }
            try await Self.record(outbox, dispatcher, urls: [Self.url, other])
            #expect(await eventually { reports.results.filter { $0 == .delivered }.count == 2 })
            #expect(await upstream.requests(to: Self.url).count == 1)
            #expect(await upstream.requests(to: other).count == 3)
        }
    }

    @Test func aDeliveryToAURLNoLongerConfiguredIsDroppedUnsent() async throws {
        try await Self.with { outbox, upstream, dispatcher, reports in
            try await Self.record(outbox, dispatcher, urls: ["https://removed.example/in"])
            #expect(await eventually { reports.count == 1 })
            #expect(reports.results == [.dropped])
            #expect(await upstream.requests.isEmpty)
        }
    }

    @Test func theSignatureIsStripesScheme() {
        // Computed independently: printf '%s' '1700000000.{"a":1}' | openssl dgst -sha256 -hmac 'k'
        #expect(
            WebhookSignature.header(secret: Array("k".utf8), timestamp: 1_700_000_000, body: Array("{\"a\":1}".utf8))
                == "t=1700000000,v1=1b6ad1bc9bf48c52ce01939866d5877c6cc4e87ddad27e16673cb8c4964394a3")
        let body = Array("{\"id\":\"evt_1\"}".utf8)
        let header = WebhookSignature.header(secret: Self.secret, timestamp: 1_700_000_000, body: body)
        let now = Date(timeIntervalSince1970: 1_700_000_100)
        #expect(WebhookSignature.verify(header: header, secret: Self.secret, body: body, now: now))
        #expect(!WebhookSignature.verify(header: header, secret: Self.secret, body: body + [0x20], now: now))
        #expect(!WebhookSignature.verify(header: header, secret: Self.secret, body: body, now: now.addingTimeInterval(300)))
        #expect(!WebhookSignature.verify(header: "v1=00", secret: Self.secret, body: body, now: now))
    }

    @Test func retriesDoubleWithJitterUpToTheCapAndEndAtTheWindow() {
        let policy = WebhookRetryPolicy(base: 10, cap: 3600, retryFor: 86_400)
        #expect((1...11).map(policy.delay(afterAttempts:)) == [10, 20, 40, 80, 160, 320, 640, 1280, 2560, 3600, 3600])
        let delivery = WebhookOutboxConformance.delivery(at: .fixture)
        let at = Date.fixture.addingTimeInterval(100)
        #expect(policy.nextAttempt(after: delivery, attempts: 3, now: at, random: { 0 }) == at.addingTimeInterval(20))
        #expect(policy.nextAttempt(after: delivery, attempts: 3, now: at, random: { 0.999_999 })! < at.addingTimeInterval(40))
        // The last attempt is made at the end of the window, and a failure after it gives up.
        let late = Date.fixture.addingTimeInterval(86_400 - 5)
        #expect(policy.nextAttempt(after: delivery, attempts: 30, now: late, random: { 0.5 }) == Date.fixture.addingTimeInterval(86_400))
        #expect(policy.nextAttempt(after: delivery, attempts: 31, now: Date.fixture.addingTimeInterval(86_400), random: { 0.5 }) == nil)
    }
}

extension WebhookDispatcherTests {
    @Test func oneAccountsEventsTakenTogetherGoOutInOrderAndWaitForAnEarlierRetry() async throws {
        try await Self.with { outbox, upstream, dispatcher, reports in
            // The first attempt of the account's earlier event fails. Keyed by event, not by call: the other
            // account's event goes out beside it, in either order.
            let firstAttempts = Mutex(0)
            await upstream.on(Self.url) { request in
                guard request.header("Broker-Event-Id") == WebhookOutboxConformance.eventID(1) else {
                    return .success(UpstreamResponse(status: 200))
                }
                return firstAttempts.withLock {
                    $0 += 1; return $0
                } == 1 ? .success(UpstreamResponse(status: 500)) : .success(UpstreamResponse(status: 200))
            }
            // Recorded a second ago, a millisecond apart: all three are due at the first claim, however soon it
            // comes (recorded at now, the second event was due a millisecond later and a fast claim took the first
            // without it: "taken together" is what is tested).
            let at = Date().addingTimeInterval(-1)
            let first = WebhookOutboxConformance.delivery(WebhookOutboxConformance.eventID(1), url: Self.url, at: at)
            let second = WebhookOutboxConformance.delivery(
                WebhookOutboxConformance.eventID(2), url: Self.url, at: at.addingTimeInterval(0.001))
            let other = WebhookOutboxConformance.delivery(WebhookOutboxConformance.eventID(3), account: "acme:other", url: Self.url, at: at)
            try await outbox.append([second, other, first])
            dispatcher.wake()
            #expect(await eventually { reports.results.filter { $0 == .delivered }.count == 3 })
            let sent = await upstream.requests.compactMap { $0.header("Broker-Event-Id") }.filter { $0 != other.eventID }
            #expect(sent == [first.eventID, first.eventID, second.eventID])
            #expect(try await outbox.stats().pending == 0)
        }
    }

    @Test func groupsAreByAccountAndURLInTheOrderRecorded() {
        let at = Date.fixture
        func lease(_ n: Int, account: AccountID?, url: String = Self.url, offset: Double) -> WebhookLease {
            WebhookLease(
                delivery: WebhookOutboxConformance.delivery(
                    WebhookOutboxConformance.eventID(n), account: account, url: url,
                    at: at.addingTimeInterval(offset)), token: "t")
        }
        let groups = WebhookDispatcher.inOrder([
            lease(1, account: "x:a", offset: 2), lease(2, account: "x:b", offset: 0), lease(3, account: "x:a", offset: 1),
            lease(4, account: "x:a", url: "https://other.example/in", offset: 0), lease(5, account: nil, offset: 0),
            lease(6, account: nil, offset: 0),
        ])
        #expect(
            groups.map { $0.map(\.delivery.eventID) } == [
                [3, 1].map(WebhookOutboxConformance.eventID), [WebhookOutboxConformance.eventID(2)], [WebhookOutboxConformance.eventID(4)],
                [WebhookOutboxConformance.eventID(5)], [WebhookOutboxConformance.eventID(6)],
            ])
    }
}

extension WebhookDispatcherTests {
    @Test func deliveriesALeaseWouldNotCoverAreGivenBackDueNow() async throws {
        try await TemporaryDirectory.with { directory in
            let outbox = try JournalWebhookOutbox(directory: directory)
            let upstream = FakeUpstream()
            await upstream.on(Self.url, respond: UpstreamResponse(status: 200))
            var settings = WebhookDispatcher.Settings(
                secret: Self.secret, urls: [Self.url],
                policy: WebhookRetryPolicy(base: 0.05, cap: 0.2, retryFor: 60), attemptTimeout: 1)
            // A lease too short for a second attempt: the first is sent, the second given back untouched.
            settings.lease = 1.5
            let dispatcher = WebhookDispatcher(outbox: outbox, upstream: upstream, settings: settings)
            // A second ago: the second delivery is due at every claim below, however soon it comes.
            let at = Date().addingTimeInterval(-1)
            let first = WebhookOutboxConformance.delivery(WebhookOutboxConformance.eventID(1), url: Self.url, at: at)
            let second = WebhookOutboxConformance.delivery(
                WebhookOutboxConformance.eventID(2), url: Self.url, at: at.addingTimeInterval(0.001))
            try await outbox.append([first, second])
            let leases = try await outbox.claim(limit: 10, now: Date(), lease: settings.lease)
            await dispatcher.attemptInOrder(leases)
            #expect(await upstream.requests.count == 1)
            let pending = try await outbox.list(limit: 10).pending
            #expect(pending.map(\.id) == [second.id] && pending.first?.attempts == 0)
            #expect(try await outbox.claim(limit: 10, now: Date(), lease: 5).map(\.delivery.id) == [second.id])
        }
    }
}
