import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerCore

/// Refresh on read: `account(id:)` renews a token that expires within the margin, and handles every way the provider can answer.
struct AccountServiceRefreshTests {
    static let googleID = "google:110169484474386276334"

    @Test func aReadWithinTheMarginRefreshesFirstAndKeepsGooglesRefreshToken() async throws {
        try await RefreshFixture.with { f in
            await f.upstream.on(RefreshFixture.googleTokenURL, respond: ProviderWire.googleToken(accessToken: "ya29.new-SENTINEL"))
            let service = f.service()
            let seeded = try await f.seed(lifetime: 3600)
            f.clock.advance(3400)
            let read = try await service.account(id: seeded.accountID)
            #expect(read.accessToken.value == "ya29.new-SENTINEL")
            let request = try #require(await f.refreshCalls().first)
            #expect(request.method == "POST")
            #expect(
                request.form == [
                    "grant_type": "refresh_token", "refresh_token": "1//refresh-SENTINEL-0",
                    "client_id": "google-id.apps.googleusercontent.com", "client_secret": "google-secret-SENTINEL",
                ])
            let stored = try #require(try await f.stored(seeded.accountID))
            #expect(stored == read)
            // RFC 6749 §6: no new refresh token in the answer, so the old one stays.
            #expect(stored.refreshToken?.value == "1//refresh-SENTINEL-0")
            #expect(stored.expiresAt == f.clock.now.addingTimeInterval(3920))
            #expect(stored.refreshedAt == f.clock.now)
            #expect(stored.updatedAt == f.clock.now)
            #expect(stored.createdAt == seeded.createdAt)
            #expect(stored.status == .active)
            #expect(f.events.all == [RefreshCoordinator.Event(provider: "google", accountID: seeded.accountID, result: .refreshed)])
            // The new token is outside the margin: the next read makes no call.
            #expect(try await service.account(id: seeded.accountID) == stored)
            #expect(await f.refreshCalls().count == 1)
        }
    }

    @Test func aReadOutsideTheMarginMakesNoCallAndTheMarginIsConfigurable() async throws {
        try await RefreshFixture.with { f in
            await f.upstream.on(RefreshFixture.googleTokenURL, respond: ProviderWire.googleToken(accessToken: "ya29.new"))
            let seeded = try await f.seed(lifetime: 3600)
            f.clock.advance(3000)
            #expect(try await f.service(margin: 300).account(id: seeded.accountID) == seeded)
            #expect(await f.refreshCalls().isEmpty)
            #expect(try await f.service(margin: 900).account(id: seeded.accountID).accessToken.value == "ya29.new")
            #expect(await f.refreshCalls().count == 1)
        }
    }

    @Test func aRotatedRefreshTokenReplacesTheOldOneWhichIsNeverPresentedAgain() async throws {
        try await RefreshFixture.with { f in
            let github = RotatingTokenEndpoint(refreshToken: "ghr_refresh-SENTINEL-0")
            await f.upstream.on(RefreshFixture.githubTokenURL) { github.answer($0) }
            let service = f.service()
            let seeded = try await f.seed(provider: "github", uid: "1", lifetime: 28_800, refreshToken: "ghr_refresh-SENTINEL-0")
            f.clock.advance(28_800 - 60)
            #expect(try await service.account(id: seeded.accountID).accessToken.value == "ghu_access-SENTINEL-1")
            #expect(try await f.stored(seeded.accountID)?.refreshToken?.value == "ghr_refresh-SENTINEL-1")
            f.clock.advance(28_800)
            #expect(try await service.account(id: seeded.accountID).accessToken.value == "ghu_access-SENTINEL-2")
            #expect(github.presented == ["ghr_refresh-SENTINEL-0", "ghr_refresh-SENTINEL-1"])
            #expect(try await f.stored(seeded.accountID)?.refreshToken?.value == github.current)
        }
    }

    @Test(arguments: [
        ("google", "110169484474386276334", RefreshFixture.googleTokenURL, ProviderWire.googleInvalidGrant),
        (
            "github", "1", RefreshFixture.githubTokenURL,
            ProviderWire.response(
                200, "application/json",
                #"{"error":"bad_refresh_token","error_description":"The refresh token passed is incorrect or expired."}"#)
        ),
        (
            "weibo", "3733034601", "https://api.weibo.com/oauth2/access_token",
            ProviderWire.response(
                400, "text/plain;charset=UTF-8",
                #"{"error":"invalid_grant","error_code":21325,"request":"/oauth2/access_token","error_uri":"/oauth2/access_token"}"#)
        ),
    ])
    func aDeadRefreshTokenMarksTheAccountForReauthorizationAndKeepsItsTokens(
        provider: String, uid: String, tokenURL: String, answer: UpstreamResponse
    ) async throws {
        try await RefreshFixture.with { f in
            await f.upstream.on(tokenURL, respond: answer)
            let service = f.service()
            let seeded = try await f.seed(provider: provider, uid: uid, lifetime: 600)
            f.clock.advance(500)
            let refusal = await brokerError { try await service.account(id: seeded.accountID) }
            #expect(refusal == .reauthorizationRequired)
            let stored = try #require(try await f.stored(seeded.accountID))
            #expect(stored.status == .reauthorizationRequired)
            #expect(stored.accessToken == seeded.accessToken && stored.refreshToken == seeded.refreshToken)
            #expect(stored.expiresAt == seeded.expiresAt)
            #expect(service.reportedStatus(of: stored) == "reauthorization_required")
            #expect(f.events.all.map(\.result) == [.failed(.invalidGrant, message: "the provider rejected the refresh token")])
            // Marked for good: later reads make no call.
            #expect(await brokerError { try await service.account(id: seeded.accountID) } == .reauthorizationRequired)
            #expect(await f.upstream.requests(to: tokenURL).count == 1)
        }
    }

    @Test func aTransientFailureKeepsTheValidTokenAndBacksOffBeforeTryingAgain() async throws {
        try await RefreshFixture.with { f in
            await f.upstream.on(RefreshFixture.googleTokenURL, respond: ProviderWire.htmlError)
            let service = f.service()
            let seeded = try await f.seed(lifetime: 3600)
            f.clock.advance(3400)
            #expect(try await service.account(id: seeded.accountID) == seeded)
            #expect(try await f.stored(seeded.accountID) == seeded)
            // Inside the backoff (its 30-second cooldown) the still-valid token is served without a call.
            f.clock.advance(29)
            #expect(try await service.account(id: seeded.accountID) == seeded)
            #expect(await f.refreshCalls().count == 1)
            f.clock.advance(1)
            await f.upstream.on(RefreshFixture.googleTokenURL, respond: ProviderWire.googleToken(accessToken: "ya29.later"))
            #expect(try await service.account(id: seeded.accountID).accessToken.value == "ya29.later")
            #expect(await f.refreshCalls().count == 2)
            let results = f.events.all.map(\.result)
            #expect(results.count == 2 && results.last == .refreshed)
            guard case .failed(.transient, let message) = results.first else {
                Issue.record("expected a transient failure first, got \(results)")
                return
            }
            #expect(message.contains("HTTP 502") && !message.contains("SENTINEL"))
            #expect(await service.refresher.retryNotBefore(accountID: seeded.accountID) == nil)
        }
    }

    @Test func aTransientFailureAfterExpiryIsReportedAndTheTokenKept() async throws {
        try await RefreshFixture.with { f in
            await f.upstream.on(RefreshFixture.googleTokenURL, fail: .timeout)
            let service = f.service()
            let seeded = try await f.seed(lifetime: 3600)
            f.clock.advance(3601)
            #expect(await brokerError { try await service.account(id: seeded.accountID) } == .upstreamTimeout(step: "token_refresh"))
            // Inside the backoff an expired token's reader gets the last try's error at once, without a call.
            await f.upstream.on(RefreshFixture.googleTokenURL, respond: ProviderWire.response(503, nil, ""))
            f.clock.advance(29)
            #expect(await brokerError { try await service.account(id: seeded.accountID) } == .upstreamTimeout(step: "token_refresh"))
            #expect(await f.refreshCalls().count == 1)
            f.clock.advance(1)
            let refusal = await brokerError { try await service.account(id: seeded.accountID) }
            #expect(refusal?.code == "upstream_error")
            #expect(refusal?.message.contains("HTTP 503") == true)
            #expect(await f.refreshCalls().count == 2)
            let stored = try #require(try await f.stored(seeded.accountID))
            #expect(stored == seeded)
            #expect(service.reportedStatus(of: stored) == "active")
        }
    }

    @Test func accountsWithoutARefreshTokenExpireAsBefore() async throws {
        try await RefreshFixture.with { f in
            let service = f.service()
            let seeded = try await f.seed(lifetime: 600, refreshToken: nil)
            f.clock.advance(500)
            #expect(try await service.account(id: seeded.accountID) == seeded)
            #expect(service.reportedStatus(of: seeded) == "active")
            f.clock.advance(100)
            #expect(await brokerError { try await service.account(id: seeded.accountID) } == .expired)
            #expect(service.reportedStatus(of: seeded) == "expired")
            #expect(await f.upstream.requests.isEmpty)
        }
    }

    @Test func aProviderThatAuthenticatesWithBasicRefreshesWithBasic() async throws {
        try await RefreshFixture.with { f in
            await f.upstream.on(
                "https://acme.example/token",
                respond: ProviderWire.response(
                    200, "application/json",
                    #"{"access_token":"acme-new","token_type":"Bearer","expires_in":60}"#))
            let seeded = try await f.seed(provider: "acme", uid: "7", lifetime: 10)
            let read = try await f.service().account(id: seeded.accountID)
            #expect(read.accessToken.value == "acme-new")
            #expect(read.expiresAt == f.clock.now.addingTimeInterval(60))
            #expect(read.tokenType == "Bearer")
            let request = try #require(await f.upstream.requests(to: "https://acme.example/token").first)
            // RFC 6749 §2.3.1: the id and secret go in the Basic header, never in the form as well.
            #expect(request.form == ["grant_type": "refresh_token", "refresh_token": "1//refresh-SENTINEL-0"])
            let basic = "Basic " + Data("acme-id:acme-secret-SENTINEL".utf8).base64EncodedString()
            #expect(request.headers.contains { $0.0 == "Authorization" && $0.1 == basic })
        }
    }

    @Test func twentyConcurrentReadersCauseOneRefreshAndAllGetItsToken() async throws {
        try await RefreshFixture.with { f in
            await f.upstream.on(RefreshFixture.googleTokenURL, respond: ProviderWire.googleToken(accessToken: "ya29.shared"))
            let held = HeldUpstream(forwardingTo: f.upstream)
            let lock = CountingLock(now: f.clock.function)
            let service = f.service(lock: lock, upstream: held)
            let seeded = try await f.seed(lifetime: 3600)
            f.clock.advance(3500)
            try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<20 {
                    group.addTask { try await service.account(id: seeded.accountID).accessToken.value }
                }
                try await held.waitForArrivals(1)
                // Every reader has joined the one refresh before the provider answers it.
                #expect(await eventually { await service.refresher.flight.callers(of: RefreshCoordinatorTests.lockKey) == 20 })
                await held.open()
                var tokens: [String] = []
                for try await token in group { tokens.append(token) }
                #expect(tokens == Array(repeating: "ya29.shared", count: 20))
            }
            #expect(await held.arrivals == 1)
            #expect(await f.refreshCalls().count == 1)
            #expect(f.events.all.count == 1)
            // Readers in one process join the running refresh; only its leader asks the shared lock (Redis on replicas).
            #expect(lock.acquisitions == 1)
        }
    }
}

/// The coordinator's observer hears of a refresh that gained nothing, once per account per hour.
struct RefreshLifetimeWarningTests {
    @Test func aTokenThatEndsNoLaterThanItsPredecessorIsReportedOncePerAccountPerHour() async throws {
        try await RefreshFixture.with { f in
            func answer(lifetime: Int) async {
                await f.upstream.on(
                    RefreshFixture.googleTokenURL,
                    respond: ProviderWire.googleToken(accessToken: "ya29.next", refreshToken: "1//r", expiresIn: lifetime))
            }
            let service = f.service()
            let seeded = try await f.seed(lifetime: 200)
            // 200 s left, and the new token lives 100 s: it ends sooner than the one it replaced.
            await answer(lifetime: 100)
            _ = try await service.refreshNow(id: seeded.accountID)
            #expect(f.events.all.map(\.warnings) == [[.notLongerLived]])
            // The same story a little later (past the forced refresh's 10 s reuse) is not told again within the hour.
            f.clock.advance(11)
            await answer(lifetime: 50)
            _ = try await service.refreshNow(id: seeded.accountID)
            // A token that outlives its predecessor is no news.
            f.clock.advance(3600)
            await answer(lifetime: 1000)
            _ = try await service.refreshNow(id: seeded.accountID)
            // Over an hour after the first report (and past the 10 s reuse): told again.
            f.clock.advance(11)
            await answer(lifetime: 500)
            _ = try await service.refreshNow(id: seeded.accountID)
            #expect(f.events.all.map(\.warnings) == [[.notLongerLived], [], [], [.notLongerLived]])
            #expect(f.events.all.allSatisfy { $0.result == .refreshed })
        }
    }
}
