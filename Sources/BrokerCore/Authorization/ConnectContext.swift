/// What a connect session carries: who may run it, where its outcome is posted, and what it may connect.
///
/// A connect session (`POST /connect/sessions`) lets a front end run one connection in a popup. It is kept as a
/// pending flow whose ``stage`` says what the record is, so it is single-use, expires and is shared by every
/// replica exactly as pending flows are: the session itself (keyed by the hash of its token), the provider
/// choice it turns into when its page is opened (bound to that browser), and the sign-in flow started from it.
public struct ConnectContext: Sendable, Equatable {
    /// What a stored record with this context is.
    public enum Stage: String, Sendable, Equatable {
        /// A session not opened yet: its key is the SHA-256 of the token the back end was given.
        case session
        /// An opened session waiting for the person to choose a provider; bound to the browser that opened it.
        case picker
        /// A sign-in started from a session; completed by `/callback` like any flow.
        case flow
    }

    /// What the record is.
    public var stage: Stage
    /// The front end's origin (`https://app.example`): the only target its outcome message is posted to.
    public var origin: String
    /// The providers the person may choose from; empty allows every provider that signs people in.
    public var allowedProviders: [String]
    /// The account a reconnect session renews; its sign-in must come back as this account.
    public var reconnectAccountID: String?
    /// The scopes asked for instead of the provider's configured ones; nil asks for those.
    public var scopes: [String]?

    /// A context at `stage`.
    public init(
        stage: Stage, origin: String, allowedProviders: [String] = [], reconnectAccountID: String? = nil, scopes: [String]? = nil
    ) {
        self.stage = stage
        self.origin = origin
        self.allowedProviders = allowedProviders
        self.reconnectAccountID = reconnectAccountID
        self.scopes = scopes
    }

    /// The same context at `stage`.
    public func at(_ stage: Stage) -> ConnectContext {
        var copy = self
        copy.stage = stage
        return copy
    }

    /// Whether the person may connect `provider` in this session.
    public func allows(_ provider: String) -> Bool {
        allowedProviders.isEmpty || allowedProviders.contains(provider)
    }
}
