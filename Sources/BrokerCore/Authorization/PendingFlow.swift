import Foundation

/// An authorization that was started and waits for its callback, keyed by its `state`.
///
/// Kept on disk so that a flow started before a restart can complete after it.
public struct PendingFlow: Sendable, Equatable {
    /// The key: at least 128 random bits, base64url, made by the caller (RFC 6749 §10.12).
    public var state: String
    /// The provider key the flow belongs to.
    public var provider: String
    /// What binds the flow to one browser (a hash of the flow cookie) or to one API caller.
    public var binding: String
    /// The PKCE code verifier (RFC 7636 §4.1).
    public var codeVerifier: Secret?
    /// The OAuth 1.0a request token, or the TMDB request token.
    public var requestToken: String?
    /// The OAuth 1.0a request token secret.
    public var requestTokenSecret: Secret?
    /// Where to send the browser when the flow completes.
    public var returnTo: String?
    /// The OpenID Connect `nonce` the authorization request carried (OIDC Core §3.1.2.1); absent in other flows and in flows of earlier versions.
    public var nonce: Secret?
    /// The end user the API caller started the flow for; nil for browser flows and flows of earlier versions.
    public var endUser: EndUser?
    /// The tags the API caller put on the flow's account; empty when none.
    public var tags: [String: String]
    /// The connect session this record is, or the flow was started from; nil for flows started otherwise.
    public var connect: ConnectContext?
    /// The scopes this flow asked for instead of the provider's configured ones (`POST /authorize`, `GET /authorize`,
    /// a step-up); nil when it asked for those, and in flows of earlier versions. A grant lacking any of them fails the flow.
    public var scopes: [String]?
    /// The account a step-up flow upgrades (`GET /account?scopes=`): its sign-in must come back as this account.
    public var stepUpAccountID: String?
    /// The device sign-in the broker polls for; nil for flows completed by a callback and flows of earlier versions.
    public var device: DeviceContext?
    /// The provider's per-account settings (``AccountSetting``) this flow was started with, already checked; they fill
    /// the provider's URLs at the callback and are stored with the account. Empty when none, and in flows of earlier versions.
    public var settings: [String: String]
    /// When the flow started.
    public var createdAt: Date
    /// When the flow stops being usable.
    public var expiresAt: Date

    /// Creates a pending flow; optional fields default to absent.
    public init(
        state: String,
        provider: String,
        binding: String,
        codeVerifier: Secret? = nil,
        requestToken: String? = nil,
        requestTokenSecret: Secret? = nil,
        returnTo: String? = nil,
        nonce: Secret? = nil,
        createdAt: Date,
        expiresAt: Date,
        endUser: EndUser? = nil,
        tags: [String: String] = [:],
        connect: ConnectContext? = nil,
        scopes: [String]? = nil,
        stepUpAccountID: String? = nil,
        device: DeviceContext? = nil,
        settings: [String: String] = [:]
    ) {
        self.state = state
        self.provider = provider
        self.binding = binding
        self.codeVerifier = codeVerifier
        self.requestToken = requestToken
        self.requestTokenSecret = requestTokenSecret
        self.returnTo = returnTo
        self.nonce = nonce
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.endUser = endUser
        self.tags = tags
        self.connect = connect
        self.scopes = scopes
        self.stepUpAccountID = stepUpAccountID
        self.device = device
        self.settings = settings
    }

    /// Whether the flow says whom its account belongs to: an end user or tags were given, and replace the stored ones.
    public var assignsOwner: Bool { endUser != nil || !tags.isEmpty }

    /// Whether the flow can no longer be completed at `now`.
    public func isExpired(at now: Date) -> Bool {
        expiresAt <= now
    }
}
