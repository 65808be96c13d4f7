import BrokerCore
import Foundation
import Testing

/// The TMDB v3 session flow through ``AuthorizationService`` and ``AccountService``.
struct TMDBFlowTests {
    static let apiKey = TMDBClientTests.apiKey
    static let requestToken = "ff5c7eeb5a8870efe3cd7fc5c282cffd26800ecd"
    static let sessionID = "79191836ddaa0da3df76a5ffef6f07ad6ab0c641-SENTINEL"
    static let environment = BrokerHarness.environment.merging(["TMDB_API_KEY": apiKey]) { $1 }
    static let base = TMDBClientTests.base

    /// Runs `body` with TMDB configured and answering as documented.
    static func with(_ body: (BrokerHarness) async throws -> Void) async throws {
        try await BrokerHarness.with(environment: environment) { broker in
            await broker.upstream.on(base + "/authentication/token/new", respond: TMDBClientTests.tokenNew)
            await broker.upstream.on(
                base + "/authentication/session/new",
                respond: TMDBClientTests.json(#"{"success":true,"session_id":"\#(sessionID)"}"#))
            await broker.upstream.on(
                base + "/account", respond: TMDBClientTests.json(#"{"id":548,"name":"Travis Bell","username":"travisbell"}"#))
            await broker.upstream.on(base + "/authentication/session", respond: TMDBClientTests.json(#"{"success":true}"#))
            try await body(broker)
        }
    }

    /// The callback TMDB sends the browser back with after approval.
    static func approved(_ start: AuthorizationStart) -> [String: String] {
        ["state": start.state, "request_token": requestToken, "approved": "true"]
    }

    /// How many `session/new` calls were made.
    static func sessionCalls(_ broker: BrokerHarness) async -> Int {
        await broker.upstream.requests(to: base + "/authentication/session/new").count
    }

    @Test func beginBindsTheRequestTokenAndSendsTheBrowserToTheApprovalPage() async throws {
        try await Self.with { broker in
            let start = try await broker.begin("tmdb")
            let redirect = "https://broker.example/callback?state=\(start.state)"
            let components = try #require(URLComponents(string: start.authorizeURL))
            #expect(components.host == "www.themoviedb.org")
            #expect(components.path == "/authenticate/\(Self.requestToken)")
            #expect(components.queryItems?.first { $0.name == "redirect_to" }?.value == redirect)
            #expect(!start.authorizeURL.contains(Self.apiKey))
            let flow = try #require(try await broker.flows.take(state: start.state, now: .fixture))
            #expect(flow.requestToken == Self.requestToken)
            #expect(flow.requestTokenSecret == nil)
            #expect(start.expiresAt == Date.fixture.addingTimeInterval(BrokerHarness.flowTTL))
        }
    }

    @Test func theCallbackCreatesASessionAndStoresItAsTheToken() async throws {
        try await Self.with { broker in
            let start = try await broker.begin("tmdb", returnTo: "https://app.example/movies")
            let (account, returnTo) = try await broker.authorization.complete(
                state: start.state, bindingProof: "cookie-nonce-A",
                query: Self.approved(start))
            #expect(returnTo == "https://app.example/movies")
            #expect(account.id == "tmdb:548")
            #expect(account.accessToken.value == Self.sessionID)
            #expect(account.screenName == "travisbell")
            #expect(account.expiresAt == nil)
            #expect(account.tokenSecret == nil)
            #expect(try await broker.accounts.get(id: "tmdb:548") == account)
            let session = try #require(await broker.upstream.requests(to: Self.base + "/authentication/session/new").first)
            #expect(session.method == "POST")
            #expect(String(decoding: session.body, as: UTF8.self) == #"{"request_token":"\#(Self.requestToken)"}"#)
            let lookup = try #require(await broker.upstream.requests(to: Self.base + "/account").first)
            #expect(lookup.query["session_id"] == Self.sessionID)
        }
    }

    @Test(arguments: [
        ["request_token": TMDBFlowTests.requestToken],
        ["request_token": TMDBFlowTests.requestToken, "approved": "false"],
        ["request_token": TMDBFlowTests.requestToken, "approved": "TRUE "],
        ["request_token": TMDBFlowTests.requestToken, "denied": "true"],
        ["request_token": TMDBFlowTests.requestToken, "approved": "true", "denied": "true"],
        ["denied": "true"],
    ])
    func anythingButApprovalIsAccessDeniedWithoutASession(query: [String: String]) async throws {
        try await Self.with { broker in
            let start = try await broker.begin("tmdb")
            var query = query
            query["state"] = start.state
            let thrown = await brokerError {
                try await broker.authorization.complete(state: start.state, bindingProof: "cookie-nonce-A", query: query)
            }
            #expect(thrown == .accessDenied)
            #expect(await Self.sessionCalls(broker) == 0)
        }
    }

    @Test(arguments: ["0000000000000000000000000000000000000000", "", TMDBFlowTests.requestToken.uppercased()])
    func aRequestTokenNotIssuedToThisBrowserIsRefusedWithoutASession(token: String) async throws {
        try await Self.with { broker in
            let start = try await broker.begin("tmdb")
            let query = ["state": start.state, "request_token": token, "approved": "true"]
            let thrown = await brokerError {
                try await broker.authorization.complete(state: start.state, bindingProof: "cookie-nonce-A", query: query)
            }
            #expect(thrown == .invalidState)
            #expect(await Self.sessionCalls(broker) == 0)
        }
    }

    @Test func aFlowLivesNoLongerThanTheRequestToken() async throws {
        try await Self.with { broker in
            let longLived = AuthorizationService(
                registry: broker.registry, accounts: broker.accounts, flows: broker.flows, upstream: broker.upstream,
                publicURL: BrokerHarness.publicURL, flowTTL: 7200, returnToAllowlist: [], now: broker.clock.function)
            let start = try await longLived.begin(provider: "tmdb", returnTo: nil, binding: AuthorizationService.apiBinding)
            #expect(start.expiresAt == Date.fixture.addingTimeInterval(3600))
            broker.clock.advance(3600)
            let thrown = await brokerError {
                try await longLived.complete(state: start.state, bindingProof: nil, query: Self.approved(start))
            }
            #expect(thrown == .invalidState)
            #expect(await Self.sessionCalls(broker) == 0)
        }
    }

    @Test func anUnapprovedTokenAtTMDBIs502WithItsCodeAndStoresNothing() async throws {
        try await Self.with { broker in
            await broker.upstream.on(
                Self.base + "/authentication/session/new",
                respond: TMDBClientTests.json(
                    #"{"failure":true,"status_code":17,"status_message":"Session denied."}"#, status: 401))
            let start = try await broker.begin("tmdb")
            let thrown = await brokerError {
                try await broker.authorization.complete(state: start.state, bindingProof: "cookie-nonce-A", query: Self.approved(start))
            }
            #expect(thrown == .upstreamError(step: "session", reason: "HTTP 401 (not a 2xx status) with TMDB status_code 17"))
            #expect(try await broker.accounts.list(provider: nil).isEmpty)
        }
    }

    @Test func aFailedAccountLookupLogsTheFreshSessionOut() async throws {
        try await Self.with { broker in
            await broker.upstream.on(
                Self.base + "/account",
                respond: TMDBClientTests.json(
                    #"{"status_code":3,"status_message":"Authentication failed: You do not have permissions to access the service.","success":false}"#,
                    status: 401))
            let start = try await broker.begin("tmdb")
            let thrown = await brokerError {
                try await broker.authorization.complete(state: start.state, bindingProof: "cookie-nonce-A", query: Self.approved(start))
            }
            #expect(thrown == .upstreamError(step: "account", reason: "HTTP 401 (not a 2xx status) with TMDB status_code 3"))
            let logout = try #require(await broker.upstream.requests(to: Self.base + "/authentication/session?").first)
            #expect(logout.method == "DELETE")
            #expect(String(decoding: logout.body, as: UTF8.self).contains(Self.sessionID))
            #expect(try await broker.accounts.list(provider: nil).isEmpty)
        }
    }

    @Test func deletingTheAccountDeletesTheSessionAtTMDB() async throws {
        try await Self.with { broker in
            let start = try await broker.begin("tmdb")
            _ = try await broker.authorization.complete(state: start.state, bindingProof: "cookie-nonce-A", query: Self.approved(start))
            let result = try await broker.accountService.delete(id: "tmdb:548")
            #expect(result.revoked == true)
            #expect(result.revokeError == nil)
            let logout = try #require(await broker.upstream.requests(to: Self.base + "/authentication/session?").first)
            #expect(logout.method == "DELETE")
            #expect(String(decoding: logout.body, as: UTF8.self) == #"{"session_id":"\#(Self.sessionID)"}"#)
            #expect(try await broker.accounts.get(id: "tmdb:548") == nil)
        }
    }

    @Test func aFailedLogoutIsReportedButTheAccountIsStillDeleted() async throws {
        try await Self.with { broker in
            let start = try await broker.begin("tmdb")
            _ = try await broker.authorization.complete(state: start.state, bindingProof: "cookie-nonce-A", query: Self.approved(start))
            await broker.upstream.on(
                Self.base + "/authentication/session",
                respond: TMDBClientTests.json(
                    #"{"status_code":37,"status_message":"The requested session could not be found.","success":false}"#, status: 404))
            let result = try await broker.accountService.delete(id: "tmdb:548")
            #expect(result.revoked == false)
            #expect(result.revokeError?.contains("TMDB status_code 37") == true)
            #expect(result.revokeError?.contains("SENTINEL") == false)
            #expect(try await broker.accounts.get(id: "tmdb:548") == nil)
        }
    }
}
