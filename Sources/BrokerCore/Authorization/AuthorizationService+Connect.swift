import BrokerCrypto
import Foundation

/// Connect sessions: a back end asks for one, a front end's popup runs it once.
extension AuthorizationService {
    /// The longest a connect session lasts, and its default: 30 minutes.
    public static let connectSessionMaximumLifetime: Double = 1800
    /// The binding of a stored session: nobody's browser yet.
    static let sessionBinding = "connect-session"

    /// What a back end asks a connect session for.
    public struct ConnectSessionRequest: Sendable {
        /// Whom the connected account belongs to.
        public var endUser: EndUser
        /// Tags put on the connected account.
        public var tags: [String: String]
        /// Where the outcome is posted (one of the configured front-end origins; the caller checks).
        public var origin: String
        /// The providers the person may choose from; empty allows all that sign people in.
        public var allowedProviders: [String]
        /// An account to renew: the session goes straight to its provider and must come back as it.
        public var reconnectAccountID: AccountID?
        /// Scopes to ask for instead of the provider's own.
        public var scopes: [String]?
        /// Where the page goes when it has no opener to post to (an allowed `return_to`).
        public var returnTo: String?
        /// How long the session lasts, at most ``AuthorizationService/connectSessionMaximumLifetime``.
        public var lifetime: Double
        /// The per-account settings (``AccountSetting``) of the one provider the session allows; empty lets the
        /// hosted page ask for them when that provider needs some. A reconnect takes its account's unless given.
        public var settings: [String: String] = [:]

        /// A request for `endUser` from `origin`, every provider allowed, for 30 minutes.
        public init(
            endUser: EndUser, origin: String, tags: [String: String] = [:], allowedProviders: [String] = [],
            reconnectAccountID: AccountID? = nil, scopes: [String]? = nil, returnTo: String? = nil,
            lifetime: Double = AuthorizationService.connectSessionMaximumLifetime
        ) {
            self.endUser = endUser
            self.origin = origin
            self.tags = tags
            self.allowedProviders = allowedProviders
            self.reconnectAccountID = reconnectAccountID
            self.scopes = scopes
            self.returnTo = returnTo
            self.lifetime = lifetime
        }
    }

    /// The stored key of the session whose token is `token`: the token itself is never stored.
    public static func connectSessionKey(token: String) -> String {
        Base64URL.encode(SHA256.hash(Array(token.utf8)))
    }

    /// Stores a new session and returns its token (shown once) and expiry.
    ///
    /// Every allowed provider must sign people in here; a reconnect's account must exist, and its provider
    /// becomes the only one allowed. Settings, when given, are checked against the one provider allowed.
    public func createConnectSession(_ request: ConnectSessionRequest) async throws(BrokerError) -> (token: String, expiresAt: Date) {
        var allowed: [String] = []
        var settings = request.settings
        for name in request.allowedProviders {
            let provider = try connectableProvider(named: name)
            if !allowed.contains(provider.name) { allowed.append(provider.name) }
        }
        if let id = request.reconnectAccountID {
            let existing: Account?
            do { existing = try await accounts.get(id: id) } catch { throw BrokerError(error) }
            guard let existing else { throw .notFound }
            let provider = try connectableProvider(named: existing.provider)
            guard allowed.isEmpty || allowed.contains(provider.name) else {
                throw .badRequest("The account to reconnect belongs to \"\(provider.name)\", which allowed_providers leaves out")
            }
            allowed = [provider.name]
            if settings.isEmpty { settings = existing.settings }
        }
        if !settings.isEmpty {
            // Settings belong to one provider's URLs: a session that fixes them offers that provider alone. They are
            // checked now (400 invalid_setting, nothing stored) and again when the sign-in starts.
            guard allowed.count == 1 else {
                throw .badRequest("settings fix one provider's URLs: name exactly one provider in allowed_providers (or an account_id)")
            }
            settings = try connectableProvider(named: allowed[0]).applyingSettings(settings).1
        }
        let returnTo = try validateReturnTo(request.returnTo)
        let token = SecureRandom.token(byteCount: 32)
        let createdAt = now()
        let lifetime = min(max(request.lifetime, 1), Self.connectSessionMaximumLifetime)
        let session = PendingFlow(
            state: Self.connectSessionKey(token: token), provider: "", binding: Self.sessionBinding, returnTo: returnTo,
            createdAt: createdAt, expiresAt: createdAt.addingTimeInterval(lifetime), endUser: request.endUser,
            tags: request.tags,
            connect: ConnectContext(
                stage: .session, origin: request.origin, allowedProviders: allowed,
                reconnectAccountID: request.reconnectAccountID?.string, scopes: request.scopes),
            settings: settings)
        do { try await flows.put(session) } catch { throw BrokerError(error) }
        return (token, session.expiresAt)
    }

    /// The provider called `name` when a connect session can connect it: signed in to, or entered on the hosted form.
    func connectableProvider(named name: String) throws(BrokerError) -> ProviderConfiguration {
        if registry.provider(named: name)?.kind.holdsEnteredCredentials == true { return try enteredProvider(named: name) }
        return try configuredProvider(named: name)
    }

    /// Takes the session of `token` (once: a second call, or one after its expiry, is ``BrokerError/connectSessionGone``).
    public func openConnectSession(token: String) async throws(BrokerError) -> PendingFlow {
        try await takeConnect(state: Self.connectSessionKey(token: token), stage: .session, proof: nil)
    }

    /// Keeps an opened session as the provider choice of the browser whose cookie nonce is `nonce`; returns its key.
    public func holdProviderChoice(_ session: PendingFlow, cookieNonce nonce: String) async throws(BrokerError) -> String {
        var picker = session
        picker.state = Self.makeState()
        picker.binding = Self.binding(forCookieNonce: nonce)
        picker.connect = session.connect?.at(.picker)
        do { try await flows.put(picker) } catch { throw BrokerError(error) }
        return picker.state
    }

    /// Takes the provider choice `key` for the browser that proves its cookie nonce.
    public func takeProviderChoice(key: String, cookieNonce nonce: String?) async throws(BrokerError) -> PendingFlow {
        try await takeConnect(state: key, stage: .picker, proof: nonce)
    }

    /// Starts the sign-in at `provider` for an opened session, bound to the browser's cookie nonce, with the
    /// session's settings (fixed at its creation, or entered on the hosted page).
    public func beginConnect(_ session: PendingFlow, provider: String, cookieNonce nonce: String) async throws(BrokerError)
        -> AuthorizationStart
    {
        guard let connect = session.connect else { throw .invalidState }
        return try await begin(
            provider: provider, returnTo: session.returnTo, binding: Self.binding(forCookieNonce: nonce), endUser: session.endUser,
            tags: session.tags, connect: connect, settings: session.settings)
    }

    private func takeConnect(state: String, stage: ConnectContext.Stage, proof: String?) async throws(BrokerError) -> PendingFlow {
        guard Base64URL.isAlphabet(state, count: 16...128) else { throw .connectSessionGone }
        let at = now()
        let taken: PendingFlow?
        do { taken = try await flows.take(state: state, now: at) } catch { throw BrokerError(error) }
        guard let record = taken, record.connect?.stage == stage, !record.isExpired(at: at) else { throw .connectSessionGone }
        if stage == .picker, !Self.bindingMatches(record.binding, proof: proof) { throw .connectSessionGone }
        return record
    }
}
