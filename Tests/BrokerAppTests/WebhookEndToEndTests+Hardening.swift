import BrokerCore
import BrokerFakeProviders
import BrokerFileStore
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// A receiver that stops answering, a receiver that answers with a long body, and a long listing.
extension WebhookEndToEndTests {
    /// The webhook timeout of the tests of a receiver going down and coming back (a closed port is refused at once):
    /// 5 s. A down receiver is probed once per timeout and a second, so they take their pace from it.
    static let downTimeout = ["BROKER_WEBHOOK_TIMEOUT": "5"]
    /// The same where a receiver that answers 200 must stay up while another is down, or gated requests are
    /// answered: 15 s, long enough for a local receiver's answer on a machine running another test suite beside
    /// this one (5 s ran out there, and the receiver counted down drained one delivery per probe).
    static let probeTimeout = ["BROKER_WEBHOOK_TIMEOUT": "15"]
    /// Waits paced by probes of a down receiver, one per 16 s.
    static let probePaced: Double = 300

    /// A broker whose data directory already holds `count` pending deliveries to `receiver`, each of its own account
    /// (so none waits for another), enqueued a millisecond apart; the deliveries in enqueue order.
    static func brokerWithBacklog(
        _ receiver: WebhookReceiver, count: Int, listen: Bool = true
    ) async throws -> (BrokerHarness, [WebhookDelivery]) {
        let data = try TemporaryDirectory.scoped(prefix: "webhook-backlog") + "/data"
        let at = Date()
        let deliveries = (0..<count).map { n in
            WebhookOutboxConformance.delivery(
                WebhookOutboxConformance.eventID(n + 1), account: "acme:\(n)", url: receiver.url,
                at: at.addingTimeInterval(Double(n) / 1000))
        }
        do {
            let outbox = try JournalWebhookOutbox(directory: data)
            try await outbox.append(deliveries)
        }
        let provider = try FakeOAuth2Provider.scoped(.rfc6749(clientSecret: RefreshEndToEndTests.clientSecret))
        let broker = try BrokerHarness(
            providersJSON: "{\"providers\": {\(provider.providerEntry)}}", environment: environment(receiver, probeTimeout),
            dataDirectory: data, listen: listen)
        return (broker, deliveries)
    }

    /// How many log lines have this message.
    static func lines(_ log: String, _ message: String) -> Int {
        log.split(separator: "\n").filter { $0.contains("\"msg\":\"\(message)") }.count
    }

    /// The lines of `message` about the receiver at `url` (its `url` field, byte for byte).
    static func lines(_ log: String, _ message: String, about url: String) -> Int {
        log.split(separator: "\n").filter { $0.contains("\"msg\":\"\(message)") && $0.contains("\"url\":\"\(url)\"") }.count
    }

    @Test func aReceiverThatStopsAnsweringGetsOneDeliveryAtATimeAndEverythingOnceItAnswers() async throws {
        let receiver = try WebhookReceiver()
        // Every request waits for the test, then fails with 503.
        receiver.script([], then: .gated(503))
        let (broker, deliveries) = try await Self.brokerWithBacklog(receiver, count: 40)
        // The first claim sends 16 at once: nothing is known about the receiver yet.
        #expect(await eventually { receiver.waiting == 16 })
        receiver.release()
        #expect(await eventually(timeout: Self.probePaced) { Self.lines(broker.log, "webhook receiver down") == 1 })
        #expect(await eventually { receiver.inFlight == receiver.waiting })
        receiver.resetConcurrency()
        // From now on one delivery at a time, each after the last has failed.
        for _ in 0..<3 {
            #expect(await eventually(timeout: Self.probePaced) { receiver.waiting >= 1 })
            #expect(receiver.waiting == 1)
            receiver.release()
        }
        #expect(receiver.mostInFlight == 1)
        let metrics = await TestHTTP.send(port: broker.port, target: "/metrics")?.body ?? ""
        #expect(RefreshEndToEndTests.metric(metrics, "broker_webhook_receivers_down") == 1)
        #expect(RefreshEndToEndTests.metric(metrics, "broker_webhook_receiver_down_total") == 1)
        // The receiver answers again: the next probe gets through and the backlog drains, each event accepted.
        receiver.script([], then: .status(200))
        receiver.release()
        let ids = Set(deliveries.map(\.eventID))
        #expect(await eventually(timeout: Self.probePaced) { Set(receiver.accepted.compactMap(\.eventID)) == ids })
        #expect(
            await eventually {
                await TestHTTP.send(port: broker.port, target: "/webhooks", headers: Self.api)?.body.contains("\"pending_count\":0") == true
            })
        let log = broker.log
        #expect(Self.lines(log, "webhook receiver down") == 1)
        #expect(Self.lines(log, "webhook receiver back up") == 1)
        // No line per failed attempt: the one "down" line stands for them.
        #expect(Self.lines(log, "webhook delivery failed; will retry") == 0)
        let after = await TestHTTP.send(port: broker.port, target: "/metrics")?.body ?? ""
        #expect(RefreshEndToEndTests.metric(after, "broker_webhook_receivers_down") == 0)
        await broker.stop()
        await receiver.stop()
    }

    @Test func aClosedPortIsProbedOneDeliveryAtATimeAndOtherReceiversKeepTheirPace() async throws {
        let receiver = try WebhookReceiver()
        await receiver.stop()
        let other = try WebhookReceiver()
        let data = try TemporaryDirectory.scoped(prefix: "webhook-two") + "/data"
        let at = Date()
        var deliveries: [WebhookDelivery] = []
        for n in 0..<60 {
            let event = WebhookOutboxConformance.eventID(n + 1)
            let when = at.addingTimeInterval(Double(n) / 1000)
            deliveries.append(WebhookOutboxConformance.delivery(event, index: 0, account: "acme:\(n)", url: receiver.url, at: when))
            deliveries.append(WebhookOutboxConformance.delivery(event, index: 1, account: "acme:\(n)", url: other.url, at: when))
        }
        do { try await JournalWebhookOutbox(directory: data).append(deliveries) }
        let provider = try FakeOAuth2Provider.scoped(.rfc6749(clientSecret: RefreshEndToEndTests.clientSecret))
        var environment = Self.environment(receiver, Self.probeTimeout)
        environment["BROKER_WEBHOOK_URL"] = receiver.url + "," + other.url
        let broker = try BrokerHarness(
            providersJSON: "{\"providers\": {\(provider.providerEntry)}}", environment: environment, dataDirectory: data)
        // The receiver that answers gets all 60 while the other is down.
        #expect(await eventually(timeout: Self.probePaced) { Set(other.accepted.compactMap(\.eventID)).count == 60 })
        #expect(await eventually { broker.broker.webhooks?.dispatcher.receiversDown == [receiver.url] })
        // Once for the closed port. (On a loaded machine the other receiver may miss the 15 s deadline and go down too:
        // its own line, not counted here.)
        #expect(Self.lines(broker.log, "webhook receiver down", about: receiver.url) == 1)
        // Its cause is named in that line and counted in /metrics.
        #expect(
            broker.log.split(separator: "\n").contains {
                $0.contains("webhook receiver down") && $0.contains(receiver.url.split(separator: "/")[1])
                    && $0.contains("\"cause\":\"connect_refused\"")
            })
        let refused = await TestHTTP.send(port: broker.port, target: "/metrics")?.body ?? ""
        #expect(
            (RefreshEndToEndTests.metric(refused, "broker_upstream_errors_total{target=\"webhook\",cause=\"connect_refused\"}") ?? 0) >= 1)
        // While it is down it is probed on: failed attempts go on being counted, one per probe.
        let retries = { () async -> Int in
            let text = await TestHTTP.send(port: broker.port, target: "/metrics")?.body ?? ""
            return RefreshEndToEndTests.metric(text, "broker_webhook_deliveries_total{type=\"account.connected\",outcome=\"retry\"}") ?? 0
        }
        let before = await retries()
        #expect(await eventually(timeout: Self.probePaced) { await retries() >= before + 3 })
        let listing = await TestHTTP.send(port: broker.port, target: "/webhooks", headers: Self.api)?.body ?? ""
        // Every pending delivery is the down receiver's.
        #expect(listing.contains("\"pending_count\":60"))
        try receiver.start()
        #expect(await eventually(timeout: Self.probePaced) { Set(receiver.accepted.compactMap(\.eventID)).count == 60 })
        #expect(await eventually { Self.lines(broker.log, "webhook receiver back up", about: receiver.url) == 1 })
        await broker.stop()
        await receiver.stop()
        await other.stop()
    }

    @Test func a2xxWithABodyOverTheCapIsDeliveredOnceAndNotRetried() async throws {
        let s = try await Self.setUp()
        s.receiver.script([], then: .sized(200, bytes: 1 << 20))
        #expect(await s.connect() == 200)
        #expect(
            await eventually { await s.metric("broker_webhook_deliveries_total{type=\"account.connected\",outcome=\"delivered\"}") == 1 })
        #expect(await s.metric("broker_webhook_outbox_pending") == 0)
        #expect(s.receiver.received.count == 1)
        #expect(Self.lines(s.broker.log, "webhook delivery failed") == 0)
        await s.stop()
    }

    @Test func theWebhookClientCutsALongAnswerAtTheCapAndKeepsItsStatus() async throws {
        let receiver = try WebhookReceiver()
        // The timeout only bounds a hang: a full test run on two loaded cores has kept this call waiting past 30 s.
        let client = EpollUpstreamClient(timeout: 300, maxResponseBytes: WebhookSettings.maxResponseBytes, truncatesLongAnswers: true)
        let request = UpstreamRequest(method: "POST", url: receiver.url, headers: [], body: Array("{}".utf8))
        receiver.script([.sized(200, bytes: 1 << 20), .sized(500, bytes: 1 << 20), .sized(201, bytes: 100)])
        let ok = try await client.send(request)
        #expect(ok.status == 200 && ok.body.count == WebhookSettings.maxResponseBytes)
        #expect(try await client.send(request).status == 500)
        let small = try await client.send(request)
        #expect(small.status == 201 && small.body.count == 100)
        // A provider's client still refuses an answer over its cap.
        receiver.script([.sized(200, bytes: 1 << 20)])
        await #expect(throws: UpstreamError.tooLarge(limit: 1024)) {
            try await EpollUpstreamClient(timeout: 30, maxResponseBytes: 1024).send(request)
        }
        await receiver.stop()
    }

    @Test func theListingPagesBothListsWithACursorAndRefusesBadPaging() async throws {
        let receiver = try WebhookReceiver()
        // Read in process from a broker that does not listen, so its dispatcher does not run: the outbox holds still.
        let (still, deliveries) = try await Self.brokerWithBacklog(receiver, count: 250, listen: false)
        var seen: [String] = []
        var cursor: String?
        var pages = 0
        repeat {
            let target = "/webhooks?limit=100" + (cursor.map { "&cursor=" + $0 } ?? "")
            let reply = await still.respond(.GET, target, headers: Self.api)
            #expect(reply.status.code == 200)
            let page = try #require(try JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any])
            #expect(page["pending_count"] as? Int == 250)
            let pending = try #require(page["pending"] as? [[String: Any]])
            #expect(pending.count <= 100)
            seen += pending.compactMap { $0["id"] as? String }
            cursor = page["next_cursor"] as? String
            pages += 1
        } while cursor != nil && pages < 10
        #expect(pages == 3)
        // Every pending delivery once, earliest due first.
        #expect(seen == deliveries.map(\.id))
        // A cursor is signed: its position alone, or with another tag, is not one the broker gave out.
        let first = await still.respond(.GET, "/webhooks?limit=100", headers: Self.api)
        let given = try #require(
            (try JSONSerialization.jsonObject(with: Data(first.body)) as? [String: Any])?["next_cursor"] as? String)
        let position = String(given.split(separator: ".")[0])
        let forged = ["cursor=" + position, "cursor=" + position + ".AAAAAAAAAAAAAAAAAAAAAA"]
        for bad in ["limit=0", "limit=1001", "limit=+5", "limit=05", "limit=x", "cursor=bm90LWEtY3Vyc29y", "cursor=%25"] + forged {
            let reply = await still.respond(.GET, "/webhooks?" + bad, headers: Self.api)
            #expect(reply.status.code == 400, "\(bad)")
            #expect(String(decoding: reply.body, as: UTF8.self).contains("\"error\":\"bad_request\""), "\(bad)")
        }
        await still.stop()
        await receiver.stop()
    }
}
