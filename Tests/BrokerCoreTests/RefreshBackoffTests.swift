import BrokerCore
import BrokerTestSupport
import Foundation
import Testing

/// Refresh backoff under provider rate limits: `Retry-After`, reads of expired accounts, and the state's own encoding.
struct RefreshBackoffTests {
    /// Google's rate-limit answer with `Retry-After: value`.
    static func rateLimited(_ status: Int = 429, retryAfter: String?) -> UpstreamResponse {
        var response = ProviderWire.response(
            status, "application/json; charset=utf-8",
            #"{"error":"rate_limit_exceeded","error_description":"Slow down."}"#)
        if let retryAfter { response.headers.append(("Retry-After", retryAfter)) }
        return response
    }

    @Test func retryAfterHoldsReadsOfAnExpiredAccountWithTheLastErrorThenOneCall() async throws {
        try await RefreshFixture.with { f in
            await f.upstream.on(RefreshFixture.googleTokenURL, respond: Self.rateLimited(retryAfter: "120"))
            let service = f.service()
            let seeded = try await f.seed(lifetime: 3600)
            f.clock.advance(3601)
            let first = try #require(await brokerError { try await service.account(id: seeded.accountID) })
            #expect(first.code == "upstream_error" && first.message.contains("HTTP 429"))
            #expect(await service.refresher.retryNotBefore(accountID: seeded.accountID) == f.clock.now.addingTimeInterval(120))
            #expect(await service.retryAfter(accountID: seeded.accountID) == 120)
            // The whole window: every read answers at once with the same error, and nobody calls the provider.
            for _ in 0..<119 {
                f.clock.advance(1)
                #expect(await brokerError { try await service.account(id: seeded.accountID) } == first)
            }
            #expect(await service.retryAfter(accountID: seeded.accountID) == 1)
            #expect(await f.refreshCalls().count == 1)
            await f.upstream.on(RefreshFixture.googleTokenURL, respond: ProviderWire.googleToken(accessToken: "ya29.after"))
            f.clock.advance(1)
            #expect(try await service.account(id: seeded.accountID).accessToken.value == "ya29.after")
            #expect(try await service.account(id: seeded.accountID).accessToken.value == "ya29.after")
            #expect(await f.refreshCalls().count == 2)
            #expect(await service.retryAfter(accountID: seeded.accountID) == nil)
        }
    }

    @Test func twentyFourReadsOfAnExpiredAccountMakeOneCall() async throws {
        try await RefreshFixture.with { f in
            await f.upstream.on(RefreshFixture.googleTokenURL, respond: Self.rateLimited(503, retryAfter: nil))
            let service = f.service()
            let seeded = try await f.seed(lifetime: 3600)
            f.clock.advance(3601)
            for _ in 0..<12 {
                #expect(await brokerError { try await service.account(id: seeded.accountID) }?.code == "upstream_error")
                f.clock.advance(0.25)
            }
            try await withThrowingTaskGroup(of: BrokerError?.self) { group in
                for _ in 0..<12 { group.addTask { await brokerError { try await service.account(id: seeded.accountID) } } }
                for try await error in group { #expect(error?.code == "upstream_error") }
            }
            #expect(await f.refreshCalls().count == 1)
            #expect(f.events.all.count == 1)
        }
    }

    @Test func theHTTPDateFormSetsTheEndOfTheBackoff() async throws {
        try await RefreshFixture.with { f in
            let service = f.service()
            let seeded = try await f.seed(lifetime: 3600)
            f.clock.advance(3601)
            // Date.fixture + 3601 + 200 s, as IMF-fixdate.
            let until = f.clock.now.addingTimeInterval(200)
            await f.upstream.on(RefreshFixture.googleTokenURL, respond: Self.rateLimited(503, retryAfter: RFC1123.format(until)))
            #expect(await brokerError { try await service.account(id: seeded.accountID) }?.code == "upstream_error")
            #expect(await service.refresher.retryNotBefore(accountID: seeded.accountID) == until)
            f.clock.advance(199)
            #expect(await brokerError { try await service.account(id: seeded.accountID) }?.code == "upstream_error")
            #expect(await f.refreshCalls().count == 1)
            f.clock.advance(1)
            #expect(await brokerError { try await service.account(id: seeded.accountID) }?.code == "upstream_error")
            #expect(await f.refreshCalls().count == 2)
        }
    }

    @Test(arguments: [
        // A delay beyond the cap is clamped to it (one hour).
        ("99999999999999999999", 3600.0),
        ("86400", 3600),
        // Not a Retry-After: ignored, the backoff alone decides (10 s after one failure, raised to the 30 s cooldown).
        ("-5", 30), ("soon", 30), ("", 30), ("1e9", 30),
        // Shorter than the backoff: the later of the two wins.
        ("3", 30), ("45", 45),
    ])
    func absurdOrGarbageRetryAfterNeverTrapsAndIsClampedOrIgnored(field: String, wait: TimeInterval) async throws {
        try await RefreshFixture.with { f in
            await f.upstream.on(RefreshFixture.googleTokenURL, respond: Self.rateLimited(retryAfter: field))
            let service = f.service()
            let seeded = try await f.seed(lifetime: 3600)
            f.clock.advance(3601)
            #expect(await brokerError { try await service.account(id: seeded.accountID) }?.code == "upstream_error")
            #expect(await service.refresher.retryNotBefore(accountID: seeded.accountID) == f.clock.now.addingTimeInterval(wait))
        }
    }

    @Test func retryAfterOnAnotherStatusIsNotTheProvidersRateLimit() async throws {
        try await RefreshFixture.with { f in
            await f.upstream.on(RefreshFixture.googleTokenURL, respond: Self.rateLimited(400, retryAfter: "600"))
            let service = f.service()
            let seeded = try await f.seed(lifetime: 3600)
            f.clock.advance(3601)
            #expect(await brokerError { try await service.account(id: seeded.accountID) }?.code == "upstream_error")
            #expect(await service.refresher.retryNotBefore(accountID: seeded.accountID) == f.clock.now.addingTimeInterval(30))
        }
    }

    @Test func theBackgroundRefresherSkipsABackingOffAccountAndTriesOnceItEnds() async throws {
        try await RefreshFixture.with { f in
            await f.upstream.on(RefreshFixture.googleTokenURL, respond: Self.rateLimited(retryAfter: "120"))
            let service = f.service()
            let refresher = BackgroundRefresher(service: service, interval: 60)
            let seeded = try await f.seed(lifetime: 100)
            #expect(try await refresher.runOnce() == BackgroundRefresher.Summary(due: 1, failed: 1))
            // A still-valid token is served during the backoff, without a call.
            #expect(try await service.account(id: seeded.accountID) == seeded)
            f.clock.advance(60)
            #expect(try await refresher.runOnce() == BackgroundRefresher.Summary(due: 1, skipped: 1))
            #expect(await f.refreshCalls().count == 1)
            await f.upstream.on(RefreshFixture.googleTokenURL, respond: ProviderWire.googleToken(accessToken: "ya29.swept"))
            f.clock.advance(60)
            #expect(try await refresher.runOnce() == BackgroundRefresher.Summary(due: 1, refreshed: 1))
            #expect(await f.refreshCalls().count == 2)
        }
    }

    @Test func theStateEncodesWithoutSecretsAndDamagedValuesReadAsNoBackoff() throws {
        let state = RefreshBackoff(
            failures: 3, notBefore: Date.fixture.addingTimeInterval(42.5),
            lastError: .upstreamError(step: "token_refresh", reason: "HTTP 429 (not a 2xx status)"))
        #expect(RefreshBackoff(encoded: state.encoded) == state)
        let timeout = RefreshBackoff(failures: 1, notBefore: Date.fixture, lastError: .upstreamTimeout(step: "token_refresh"))
        #expect(RefreshBackoff(encoded: timeout.encoded) == timeout)
        for damaged in [
            "", "null", "[]", "{}", #"{"failures":0,"not_before_ms":1,"error":"upstream_timeout","step":"s"}"#,
            #"{"failures":1,"not_before_ms":1e300,"error":"upstream_timeout","step":"s"}"#,
            #"{"failures":1,"not_before_ms":1,"error":"expired","step":"s"}"#,
            #"{"failures":1,"not_before_ms":1,"error":"upstream_error","step":"s"}"#,
            #"{"failures":"many","not_before_ms":1,"error":"upstream_timeout","step":"s"}"#,
        ] {
            #expect(RefreshBackoff(encoded: Array(damaged.utf8)) == nil, "\(damaged)")
        }
        // A huge count decodes, capped, rather than trapping later in the backoff arithmetic.
        let huge = #"{"failures":99999999999,"not_before_ms":1,"error":"upstream_timeout","step":"s"}"#
        #expect(RefreshBackoff(encoded: Array(huge.utf8))?.failures == 1_000)
    }
}

/// IMF-fixdate formatting for tests, through Foundation rather than the code under test.
enum RFC1123 {
    static func format(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}
