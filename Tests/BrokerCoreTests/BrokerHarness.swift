import BrokerCore
import BrokerFileStore
import BrokerTestSupport
import Foundation
import Synchronization

/// The core services on real JSON-file stores in a temporary directory, a fake provider and a hand-moved clock.
struct BrokerHarness {
    /// Credentials for every OAuth 2.0 preset; each secret carries the leak sentinel.
    static let environment = [
        "WEIBO_CLIENT_ID": "1234567890", "WEIBO_CLIENT_SECRET": "weibo-secret-SENTINEL",
        "GITHUB_CLIENT_ID": "Iv1.github-id", "GITHUB_CLIENT_SECRET": "github-secret-SENTINEL",
        "GOOGLE_CLIENT_ID": "google-id.apps.googleusercontent.com", "GOOGLE_CLIENT_SECRET": "google-secret-SENTINEL",
    ]
    /// The broker's public URL, as configured (with a trailing slash that must not double).
    static let publicURL = "https://broker.example/"
    /// The origin return_to may point at.
    static let allowedOrigin = "https://app.example"
    /// How long a flow lives, in seconds.
    static let flowTTL: Double = 600

    static let weiboAccessToken = "2.00Vp7dEE-access-SENTINEL"
    static let githubAccessToken = "gho_16C7e42F-access-SENTINEL"
    static let googleAccessToken = "ya29.a0-access-SENTINEL"
    static let googleRefreshToken = "1//xEoDL4iW-refresh-SENTINEL"

    let accounts: JSONFileAccountRepository
    let flows: JSONFileFlowStore
    let upstream: FakeUpstream
    let clock: TestClock
    let registry: ProviderRegistry
    let authorization: AuthorizationService
    let accountService: AccountService
    /// The `nonce` of the last flow started, which Google's ID token answers with.
    let lastNonce = NonceBox()

    /// Runs `body` with fresh stores under a temporary directory and the default provider answers installed;
    /// `providerCalls` and `onFlow` hear what the services report for metrics.
    static func with(
        environment: [String: String] = environment, providerCalls: (any ProviderCallObserver)? = nil,
        onFlow: @escaping @Sendable (FlowEvent) -> Void = { _ in },
        _ body: (BrokerHarness) async throws -> Void
    ) async throws {
        try await TemporaryDirectory.with { directory in
            let harness = try await BrokerHarness(
                directory: directory, environment: environment,
                providerCalls: providerCalls, onFlow: onFlow)
            try await body(harness)
        }
    }

    private init(
        directory: String, environment: [String: String], providerCalls: (any ProviderCallObserver)?,
        onFlow: @escaping @Sendable (FlowEvent) -> Void
    ) async throws {
        accounts = try JSONFileAccountRepository(directory: directory)
        flows = try JSONFileFlowStore(directory: directory)
        upstream = FakeUpstream()
        clock = TestClock()
        registry = try ProviderRegistry.load(environment: environment, providersFile: nil)
        await GoogleOpenID.discover(in: registry)
        authorization = AuthorizationService(
            registry: registry, accounts: accounts, flows: flows, upstream: upstream,
            publicURL: Self.publicURL, flowTTL: Self.flowTTL, returnToAllowlist: [Self.allowedOrigin], now: clock.function,
            providerCalls: providerCalls, onFlow: onFlow)
        accountService = AccountService(
            accounts: accounts, registry: registry, upstream: upstream,
            redirectURI: authorization.redirectURI, now: clock.function, providerCalls: providerCalls)
        await upstream.on("https://api.weibo.com/oauth2/access_token", respond: ProviderWire.weiboToken(accessToken: Self.weiboAccessToken))
        await upstream.on("https://api.weibo.com/2/account/get_uid.json", respond: ProviderWire.weiboUID("3733034601", asNumber: false))
        await upstream.on("https://api.weibo.com/oauth2/revokeoauth2", respond: ProviderWire.weiboRevoked)
        await upstream.on(
            "https://github.com/login/oauth/access_token", respond: ProviderWire.githubTokenJSON(accessToken: Self.githubAccessToken))
        await upstream.on("https://api.github.com/user", respond: ProviderWire.githubUser())
        await answerGoogleToken(accessToken: Self.googleAccessToken, refreshToken: Self.googleRefreshToken)
        await upstream.on("https://openidconnect.googleapis.com/v1/userinfo", respond: ProviderWire.googleUserinfo())
        await upstream.on("https://oauth2.googleapis.com/revoke", respond: UpstreamResponse(status: 200))
    }

    /// The token endpoint URL of `provider` (an OpenID provider's from its discovery document).
    func tokenURL(_ provider: String) -> String {
        if case .loaded(let metadata) = registry.discovery.state(of: provider) { return metadata.tokenEndpoint }
        return registry.provider(named: provider)?.tokenURL ?? "-"
    }

    /// Makes Google's token endpoint answer with these tokens and an ID token for the last flow's nonce.
    func answerGoogleToken(accessToken: String, refreshToken: String?, expiresIn: Int = 3920) async {
        let nonces = lastNonce
        let clock = self.clock
        await upstream.on("https://oauth2.googleapis.com/token") { _ in
            .success(
                ProviderWire.googleToken(
                    accessToken: accessToken, refreshToken: refreshToken, expiresIn: expiresIn,
                    idToken: GoogleOpenID.idToken(nonce: nonces.value, expires: clock.now.addingTimeInterval(3600))))
        }
    }

    /// How many token requests `provider` has received.
    func tokenCalls(_ provider: String) async -> Int {
        await upstream.requests(to: tokenURL(provider)).count
    }

    /// Starts a browser flow bound to the cookie `nonce`.
    func begin(_ provider: String, nonce: String = "cookie-nonce-A", returnTo: String? = nil) async throws(BrokerError)
        -> AuthorizationStart
    {
        let start = try await authorization.begin(
            provider: provider, returnTo: returnTo, binding: AuthorizationService.binding(forCookieNonce: nonce))
        lastNonce.value = URLComponents(string: start.authorizeURL)?.queryItems?.first { $0.name == "nonce" }?.value
        return start
    }

    /// Calls back for `start` with `code`, presenting the cookie `nonce`.
    func callback(_ start: AuthorizationStart, code: String = "code-SENTINEL-1", nonce: String? = "cookie-nonce-A")
        async throws(BrokerError) -> (account: Account, returnTo: String?)
    {
        try await authorization.complete(state: start.state, bindingProof: nonce, query: ["code": code, "state": start.state])
    }
}

/// The last OpenID nonce a harness sent, shared with the answers that echo it.
final class NonceBox: Sendable {
    private let box = Mutex<String?>(nil)
    var value: String? {
        get { box.withLock { $0 } }
        set { box.withLock { $0 = newValue } }
    }
}

/// Runs `body` and returns the ``BrokerError`` it threw, or nil when it threw none (or threw another error).
func brokerError<T>(_ body: () async throws -> T) async -> BrokerError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error as? BrokerError
    }
}
