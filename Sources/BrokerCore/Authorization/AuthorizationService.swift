import BrokerCrypto
import Foundation

/// Starts and completes authorizations: state, PKCE and browser binding around each provider's exchange.
///
/// RFC 9700 §2.1: one-time `state` values bound to the user agent, PKCE S256
/// where the provider supports it, a fixed redirect URI, and no open redirect.
public final class AuthorizationService: Sendable {
    /// The binding of flows driven by a back end rather than a browser; such flows need no proof at the callback.
    public static let apiBinding = "api"
    /// The step-up flows started here, handed out again while pending.
    let stepUps = PendingStepUps()

    /// The providers flows may use.
    let registry: ProviderRegistry
    /// Where completed authorizations are stored.
    let accounts: any AccountRepository
    /// Pending flows, each taken once.
    let flows: any FlowStore
    /// How flows ended, for `GET /flows/{state}`; nil keeps no outcomes.
    let outcomes: (any FlowOutcomeStore)?
    /// What the providers' exchanges need from the broker: the outbound client, the redirect URI, the registry and the clock.
    let context: ExchangeContext
    /// How long a flow lives, in seconds (`BROKER_FLOW_TTL`).
    let flowTTL: Double
    /// The origins return_to may point at.
    let allowlist: ReturnToAllowlist
    /// The injected clock for flow creation, expiry and account timestamps.
    let now: @Sendable () -> Date
    /// Hears what became of each sign-in, for metrics.
    let onFlow: @Sendable (FlowEvent) -> Void
    /// Told of every account connected or reconnected and every sign-in that failed at the callback; nil records nothing.
    let events: (any EventSink)?

    /// The fixed redirect URI: the public URL without a trailing slash, plus `/callback` (RFC 9700 §4.1).
    public let redirectURI: String

    /// Creates the service; `flowTTL` is in seconds, `returnToAllowlist` holds origins such as `https://app.example`.
    ///
    /// `outcomes` keeps each flow's outcome from its start until `flowTTL`
    /// seconds after it ended (completed, failed or expired).
    ///
    /// `providerCalls` hears of every call to a provider and `onFlow` of every
    /// sign-in started, completed or failed, for metrics; neither may block.
    /// `events` hears of each completed or failed callback before it is answered.
    public init(
        registry: ProviderRegistry,
        accounts: any AccountRepository,
        flows: any FlowStore,
        outcomes: (any FlowOutcomeStore)? = nil,
        upstream: any UpstreamClient,
        publicURL: String,
        flowTTL: Double,
        returnToAllowlist: [String],
        now: @escaping @Sendable () -> Date,
        providerCalls: (any ProviderCallObserver)? = nil,
        onFlow: @escaping @Sendable (FlowEvent) -> Void = { _ in },
        events: (any EventSink)? = nil
    ) {
        self.registry = registry
        self.accounts = accounts
        self.flows = flows
        self.outcomes = outcomes
        self.flowTTL = flowTTL
        self.allowlist = ReturnToAllowlist(returnToAllowlist)
        self.now = now
        self.onFlow = onFlow
        self.events = events
        var base = publicURL
        while base.hasSuffix("/") { base.removeLast() }
        self.redirectURI = base + "/callback"
        self.context = ExchangeContext(
            upstream: upstream, redirectURI: redirectURI, registry: registry, now: now,
            observer: providerCalls)
    }

    /// A fresh state: 256 random bits as 43 base64url characters (RFC 6749 §10.10 asks for at least 128).
    public static func makeState() -> String {
        SecureRandom.token(byteCount: 32)
    }

    /// The binding of a browser flow: the lowercase hex SHA-256 of the flow cookie's nonce.
    public static func binding(forCookieNonce nonce: String) -> String {
        Hex.encode(SHA256.hash(Array(nonce.utf8)))
    }

    /// Validates return_to against the allowlist (exact origin: scheme, host, port); nil in gives nil out.
    ///
    /// Refuses `//x`, `/\x`, backslashes, control characters, CR/LF, `javascript:`,
    /// userinfo and every scheme but http(s), with ``BrokerError/invalidReturnTo``.
    public func validateReturnTo(_ value: String?) throws(BrokerError) -> String? {
        guard let value else { return nil }
        guard allowlist.allows(value) else { throw .invalidReturnTo }
        return value
    }

    /// Starts a flow at `provider`: a new state, and what its kind's exchange needs kept (a PKCE verifier, a request token), stored with `binding`.
    ///
    /// `binding` is ``binding(forCookieNonce:)`` of the browser's flow cookie, or
    /// ``apiBinding`` for back-end-driven flows. Returns where to send the browser.
    /// `endUser` and `tags` (checked by the caller: only an API-key caller may
    /// give them) travel with the flow and are stored with its account.
    /// A provider the registry knows hears of the start or the failure; a name
    /// the registry does not know is refused without reaching ``onFlow``.
    ///
    /// `scopes` (checked by the caller with ``Scopes/validated(_:field:)``) replace the provider's configured scopes
    /// for this flow; `stepUp` names the account a step-up flow upgrades, whose sign-in must come back as it.
    /// `settings` are the provider's per-account settings (``AccountSetting``): checked before anything else is done
    /// (``BrokerError/invalidSetting(name:reason:)``, no provider called), filled into its URLs, kept with the flow
    /// for the callback, and stored with the account.
    public func begin(
        provider name: String, returnTo: String?, binding: String, endUser: EndUser? = nil, tags: [String: String] = [:],
        connect: ConnectContext? = nil, scopes: [String]? = nil, stepUp: AccountID? = nil, settings: [String: String] = [:]
    ) async throws(BrokerError) -> AuthorizationStart {
        // A step-up for an account and scope set that has one pending gets that one (``PendingStepUps``).
        let stepUpKey = stepUp.map { PendingStepUps.key(account: $0, scopes: scopes ?? []) }
        if let stepUpKey, let known = stepUps.remembered(stepUpKey, now: now()),
            let pending = try? await flows.pending(state: known.state, now: now()), pending.stepUpAccountID == stepUp?.string
        {
            return known
        }
        do {
            let start = try await start(
                provider: name, returnTo: returnTo, binding: binding, endUser: endUser, tags: tags, connect: connect,
                scopes: scopes, stepUp: stepUp, settings: settings)
            if let stepUpKey { stepUps.remember(start, under: stepUpKey, now: now()) }
            onFlow(.started(provider: name))
            return start
        } catch {
            if let known = registry.provider(named: name) { onFlow(.failed(provider: known.name, error: error)) }
            throw error
        }
    }

    /// ``begin(provider:returnTo:binding:endUser:tags:)`` without the report.
    private func start(
        provider name: String, returnTo: String?, binding: String, endUser: EndUser?, tags: [String: String],
        connect: ConnectContext?, scopes: [String]?, stepUp: AccountID?, settings given: [String: String]
    ) async throws(BrokerError) -> AuthorizationStart {
        let named = try configuredProvider(named: name)
        // The account's settings fill the provider's URLs (`https://{subdomain}.example.com/oauth/authorize`); an unknown,
        // missing or unfit one is refused here, before any request token is asked for or anything is stored.
        let (resolved, settings) = try named.applyingSettings(given)
        var provider = resolved
        if let connect, !connect.allows(provider.name) {
            throw .badRequest("This connect session does not allow provider \"\(provider.name)\"")
        }
        // The flow's scopes (its own, else its connect session's) replace the configured ones for this sign-in only
        // (RFC 6749 §3.3). An OpenID Connect provider keeps `openid`, without which no ID token comes back (OIDC Core §3.1.2.1).
        let asked = scopes ?? connect?.scopes
        if let asked {
            // OAuth 1.0a and TMDB grants have no scopes (RFC 5849 has none): asking for some would record a grant never made.
            guard provider.kind == .oauth2 || provider.kind == .oidc || provider.kind == .mcp else {
                throw .badRequest("Provider \"\(provider.name)\" is \(provider.kind.rawValue): its grants have no scopes")
            }
            // A step-up's list holds what the provider granted already, which it may have added itself (`openid`):
            // only the scopes its caller asked for are checked, by ``checkAllowed(_:provider:)`` before it starts.
            if stepUp == nil { try Self.checkAllowed(asked, by: provider) }
            provider.scopes = provider.scopes.contains("openid") && !asked.contains("openid") ? ["openid"] + asked : asked
        }
        if stepUp != nil {
            // The provider's way of adding scopes to a grant (Google's `include_granted_scopes=true`), unless set already.
            for (name, value) in provider.scopeUpgrade.parameters where !provider.extraAuthorizeParameters.contains(where: { $0.0 == name })
            {
                provider.extraAuthorizeParameters.append((name, value))
            }
        }
        let returnTo = try validateReturnTo(returnTo)
        guard !binding.isEmpty else { throw .badRequest("The flow has no browser binding") }
        let state = Self.makeState()
        let start = try await context.exchange(for: provider).begin(state: state, binding: binding)
        let createdAt = now()
        let flow = PendingFlow(
            state: state,
            provider: provider.name,
            binding: binding,
            codeVerifier: start.codeVerifier,
            requestToken: start.requestToken,
            requestTokenSecret: start.requestTokenSecret,
            returnTo: returnTo,
            nonce: start.nonce,
            createdAt: createdAt,
            expiresAt: createdAt.addingTimeInterval(min(flowTTL, start.maximumLifetime ?? flowTTL)),
            endUser: endUser,
            tags: tags,
            connect: connect?.at(.flow),
            scopes: asked,
            stepUpAccountID: stepUp?.string,
            settings: settings
        )
        do {
            if let outcomes {
                try await flows.put(flow, recording: .pending(flow, retention: flowTTL), in: outcomes)
            } else {
                try await flows.put(flow)
            }
        } catch {
            throw BrokerError(error)
        }
        return AuthorizationStart(authorizeURL: start.authorizeURL, state: state, expiresAt: flow.expiresAt)
    }

    /// The state a callback's `state` parameter names: the part before any `?`.
    ///
    /// A state is base64url and never holds `?`; TMDB may append its own
    /// parameters after one (the TMDB exchange reads them back from the query).
    public static func flowState(callbackState: String) -> String {
        callbackState.firstIndex(of: "?").map { String(callbackState[..<$0]) } ?? callbackState
    }

    /// Refuses (400, naming them) the scopes of `asked` that the provider called `name` does not allow.
    public func checkAllowed(_ asked: [String], provider name: String) throws(BrokerError) {
        try Self.checkAllowed(asked, by: configuredProvider(named: name))
    }

    /// Refuses (400, naming them) the scopes of `asked` that `provider`'s ``ProviderConfiguration/allowedScopes`` leaves out.
    static func checkAllowed(_ asked: [String], by provider: ProviderConfiguration) throws(BrokerError) {
        guard let allowed = provider.allowedScopes else { return }
        let refused = Scopes.missing(asked, from: allowed)
        guard refused.isEmpty else {
            throw .badRequest("Provider \"\(provider.name)\" does not allow the scopes \(refused.joined(separator: " "))")
        }
    }

    /// The provider called `name` when it exists and is configured.
    func configuredProvider(named name: String) throws(BrokerError) -> ProviderConfiguration {
        guard let provider = registry.provider(named: name) else { throw .unknownProvider(name) }
        guard provider.grants.contains(.authorizationCode) else {
            throw .badRequest("Provider \"\(provider.name)\" issues app tokens only (GET /app-token); nobody signs in to it")
        }
        let missing = provider.missingSettings
        guard missing.isEmpty else { throw .providerNotConfigured(name, missing: missing) }
        return provider
    }
}
