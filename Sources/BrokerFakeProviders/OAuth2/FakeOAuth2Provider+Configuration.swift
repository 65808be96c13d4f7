import BrokerHTTP
import Foundation

extension FakeOAuth2Provider {
    /// What the provider is, fixed when it is made: its dialect, its one registered client, its consent step, its names.
    public struct Configuration: Sendable {
        /// The registered client's id.
        public var clientID: String
        /// The registered client's secret.
        public var clientSecret: String
        /// The redirect URIs registered for the client, matched byte for byte (RFC 9700 §2.1); nil takes any.
        public var redirectURIs: [String]?
        /// The wire format.
        public var dialect: OAuth2Dialect
        /// Where the endpoints are: the dialect's paths unless changed (a catalogue provider's `/<host><path>`).
        public var paths: OAuth2Dialect.Paths
        /// How the provider bends its dialect: what it demands of a client and how it answers; none by default.
        public var quirks: Quirks
        /// How the user's answer is given.
        public var consent: Consent
        /// What the provider does with PKCE.
        public var pkce: PKCEPolicy
        /// How codes and tokens are named.
        public var names: TokenNames
        /// The `login` the user endpoint reports (RFC 6749 dialect); nil leaves it out.
        public var login: String?
        /// The `name` the user endpoint reports (RFC 6749 dialect); nil leaves it out.
        public var displayName: String?
        /// The `email` the user endpoint reports (RFC 6749 dialect); nil leaves it out.
        public var email: String?
        /// The issuer identifier put in every authorization response as `iss` (RFC 9207 §2); nil sends none.
        public var issuer: String?
        /// Whether the provider is also an OpenID Connect provider: it serves `/.well-known/openid-configuration`
        /// (OIDC Discovery §4), and a code exchange answers with an `id_token` (OIDC Core §3.1.3.3). Its issuer is
        /// `http://` plus the `Host` it is asked under, so it is known before the port is.
        public var openID: Bool = false
        /// The issuer an ``openID`` provider names when it stands in for a real one at `/<host><path>` (the
        /// convention of a client that rewrites `https://host/path` to the fake): its document is served at
        /// `/<host><path>/.well-known/openid-configuration`, names its endpoints `https:/` plus their paths, and
        /// its ID tokens carry this issuer. Nil: `http://` plus the `Host` it is asked under.
        public var openIDIssuer: String? = nil
        /// Whether `/_fake/stats` and `/_fake/control` answer, so another process can read the ledger and set the behaviour.
        public var controlRoutes: Bool
        /// Whether the token endpoint grants app tokens with the client credentials grant (RFC 6749 §4.4); without it
        /// that grant is `unsupported_grant_type`, as at a provider that has none.
        public var clientCredentials: Bool = false
        /// The provider's clock: codes live ten minutes (RFC 6749 §4.1.2), access tokens their lifetime.
        public var now: @Sendable () -> Date

        /// Creates a configuration; the other values start as the dialect's usual ones.
        public init(dialect: OAuth2Dialect, clientID: String, clientSecret: String) {
            self.dialect = dialect
            paths = dialect.paths
            quirks = Quirks()
            self.clientID = clientID
            self.clientSecret = clientSecret
            redirectURIs = nil
            consent = .automatic
            pkce = dialect == .weibo ? .ignored : .optional
            names = dialect == .weibo ? .weibo : .sentinel("ACME")
            login = dialect == .weibo ? nil : "ada"
            displayName = nil
            issuer = nil
            controlRoutes = false
            now = { Date() }
        }

        /// An RFC 6749 provider (GitHub App, Google, any standard server) with a test client and sentinel names.
        public static func rfc6749(clientSecret: String, clientID: String = "acme-client-id") -> Configuration {
            Configuration(dialect: .rfc6749, clientID: clientID, clientSecret: clientSecret)
        }

        /// Sina Weibo with its documented test client id.
        public static func weibo(clientSecret: String, clientID: String = "1234567890") -> Configuration {
            Configuration(dialect: .weibo, clientID: clientID, clientSecret: clientSecret)
        }
    }

    /// How the user approves or refuses.
    public enum Consent: Sendable, Equatable {
        /// The authorize endpoint answers at once, approving unless ``Behaviour/deny`` is set: what tests and benchmarks need.
        case automatic
        /// The authorize endpoint shows a page naming the provider (with "not a real account") and
        /// asking Approve or Deny in a form; the answer is posted back to the authorize endpoint.
        case page(providerName: String)
    }

    /// What the provider does with RFC 7636.
    public enum PKCEPolicy: Sendable, Equatable {
        /// Every authorization must carry an S256 challenge (RFC 9700 §2.1.1 for public clients).
        case required
        /// A challenge is checked when sent; a verifier without a challenge is refused (RFC 9700 §2.1.1).
        case optional
        /// The parameters are ignored, as by a provider without PKCE (Weibo).
        case ignored
        /// The provider documents no PKCE, so a client that sends a challenge is misconfigured: the authorization
        /// is refused and the challenge recorded in ``Ledger/violations``.
        case forbidden
    }

    /// How codes and tokens are spelled: a prefix, a number counting up, and optionally a random tail.
    public struct TokenNames: Sendable, Equatable {
        /// Put before an authorization code's number.
        public var code: String
        /// Put before an access token's number.
        public var access: String
        /// Put before a refresh token's number.
        public var refresh: String
        /// Whether a random tail follows the number, so names cannot be guessed.
        public var random: Bool

        /// Creates names from their prefixes.
        public init(code: String, access: String, refresh: String, random: Bool) {
            self.code = code
            self.access = access
            self.refresh = refresh
            self.random = random
        }

        /// `LABEL-CODE-SENTINEL-n`, `LABEL-ACCESS-SENTINEL-n`, `LABEL-REFRESH-SENTINEL-n`: predictable, and easy to scan logs for.
        public static func sentinel(_ label: String) -> TokenNames {
            TokenNames(
                code: label + "-CODE-SENTINEL-", access: label + "-ACCESS-SENTINEL-",
                refresh: label + "-REFRESH-SENTINEL-", random: false)
        }

        /// Weibo's `2.00…` access tokens, marked for scans, with a random tail.
        public static let weibo = TokenNames(
            code: "WEIBO-CODE-SENTINEL-", access: "2.00WEIBO-TOKEN-SENTINEL-",
            refresh: "2.00WEIBO-REFRESH-SENTINEL-", random: true)

        /// The name with number `n`.
        func name(_ prefix: String, _ n: Int) -> String {
            prefix + String(n) + (random ? "-" + FakeWire.randomHex(12) : "")
        }
    }

    /// What the provider does at run time, and what it does wrong on purpose; tests change it with ``FakeOAuth2Provider/set(_:)``.
    public struct Behaviour: Sendable {
        /// The user refuses: the callback gets `error=access_denied` (RFC 6749 §4.1.2.1).
        public var deny = false
        /// The user id each authorization is for.
        public var users: UserIDs
        /// Seconds an access token from the code exchange lives (`expires_in`).
        public var accessTokenLifetime: Int
        /// Seconds an access token from a refresh lives.
        public var refreshedTokenLifetime: Int
        /// Whether refresh tokens are issued, and what a refresh does with the one presented.
        public var refreshTokens: RefreshTokens
        /// Whether token answers state `expires_in` (RFC 6749 dialect); Salesforce's and Zendesk's do not.
        public var sendsExpiresIn = true
        /// Seconds a refresh token lives, sent as `refresh_token_expires_in` with each new one (GitHub Apps); nil sends none.
        /// The fake does not expire refresh tokens itself.
        public var refreshTokenLifetime: Int?
        /// Further top-level members of every token answer (RFC 6749 dialect), name to JSON value text:
        /// `["instance_url": "\"https://…\""]`, an `id_token`, provider-specific ones.
        public var extraFields: [String: String] = [:]
        /// Scopes the provider never grants: a code exchange answers the `scope` asked for without them (RFC 6749
        /// §3.3 lets the server grant fewer), as when a person unticks a scope on the consent screen, and a refresh
        /// answers the grant's scope without them (a narrowed grant); empty grants all.
        public var withheldScopes: [String] = []
        /// The further members of refresh answers instead of ``extraFields``; nil sends those.
        public var refreshExtraFields: [String: String]?
        /// Seconds the code exchange waits before answering.
        public var exchangeDelay: Double = 0
        /// Whether code exchanges wait (after ``exchangeDelay``) until this is false again, at most two minutes:
        /// a script can then act while the broker waits on the provider, however slow the machine.
        public var exchangeHeld = false
        /// Seconds a refresh waits before answering.
        public var refreshDelay: Double = 0
        /// Whether refreshes wait (after ``refreshDelay``, counted in flight) until this is false again, at most two
        /// minutes: a test can then act while the broker waits on the provider, such as stop the broker's database.
        public var refreshHeld = false
        /// How the code exchange fails, after the client is authenticated; nil answers normally.
        public var exchangeFailure: Failure?
        /// How a refresh fails, after the client is authenticated; nil answers normally. The refresh token stays valid.
        public var refreshFailure: Failure?
        /// The code exchange's answer, checked code and all, replaced by this text (`{{n}}` is a fresh number):
        /// for odd or hostile values. An `access_token` in it is honoured at the user endpoint.
        public var exchangeBody: String?
        /// The user endpoint's answer for a valid token, replaced by this text.
        public var userBody: String?
        /// The status revocation answers instead of success, with a `temporarily_unavailable` error; the token stays
        /// valid. Nil revokes.
        public var revokeFailure: HTTPStatus?
        /// Seconds a client credentials grant waits before answering.
        public var clientCredentialsDelay: Double = 0
        /// How a client credentials grant fails, after the client is authenticated; nil answers with a token that
        /// lives ``accessTokenLifetime`` seconds.
        public var clientCredentialsFailure: Failure?
        /// Whether the discovery document answers 503 instead, as an issuer that is down (an ``Configuration/openID`` provider).
        public var discoveryDown = false
        /// What the ID token gets wrong on purpose; nil issues a correct one.
        public var idTokenFault: IDTokenFault?
        /// Device sign-in (RFC 8628): the `authorization_pending` answers before the person's answer counts.
        public var devicePending = 3
        /// The poll (counted from 1 per device code) answered `slow_down` whatever its timing; 0 for none.
        public var deviceSlowDownAt = 0
        /// What the person does at the verification page once ``devicePending`` answers are spent.
        public var deviceOutcome: DeviceOutcome = .approve
        /// The `interval` of device authorization answers, in seconds.
        public var deviceInterval = 5
        /// A device authorization answer replacing the real one, for malformed answers; nil answers normally.
        public var deviceAnswer: String?

        /// The usual behaviour of `dialect`: Weibo issues tokens for about five years and no refresh token,
        /// the RFC 6749 dialect tokens for an hour with rotating refresh tokens (a GitHub App's user tokens).
        public init(dialect: OAuth2Dialect) {
            switch dialect {
            case .weibo:
                users = .fixed("3733034601")
                accessTokenLifetime = 157_679_999
                refreshTokens = .none
            case .rfc6749:
                users = .fixed("4242")
                accessTokenLifetime = 3600
                refreshTokens = .rotate
            }
            refreshedTokenLifetime = accessTokenLifetime
        }
    }

    /// What the person does with a device sign-in (RFC 8628 §3.5).
    public enum DeviceOutcome: String, Sendable, Equatable {
        /// Approves: the next poll gets the tokens.
        case approve
        /// Refuses: `access_denied`.
        case deny
        /// Never comes: `expired_token`.
        case expire
    }

    /// A wrong ID token, each a check of OIDC Core §3.1.3.7 a client must make.
    public enum IDTokenFault: String, Sendable, Equatable, CaseIterable {
        /// `iss` names another issuer.
        case wrongIssuer = "wrong_issuer"
        /// `aud` names another client.
        case wrongAudience = "wrong_audience"
        /// `exp` passed an hour ago.
        case expired
        /// `nonce` is not the one the authorization request sent.
        case wrongNonce = "wrong_nonce"
        /// No `nonce`, though the authorization request sent one.
        case missingNonce = "missing_nonce"
        /// Two audiences and no `azp`.
        case severalAudiences = "several_audiences"
        /// No `id_token` in the answer at all.
        case absent
    }

    /// Whose account an authorization is.
    public enum UserIDs: Sendable, Equatable {
        /// Always this user.
        case fixed(String)
        /// A new user each time, numbered from this one up: every completed sign-in is another account.
        case counting(from: Int)
    }

    /// Whether refresh tokens are issued and what a refresh does with them (RFC 6749 §6).
    public enum RefreshTokens: Sendable, Equatable {
        /// None: the access token is all there is (Weibo, a classic GitHub OAuth app).
        case none
        /// Each works once and the refresh answer carries its successor; the old access token stops working (a GitHub App).
        case rotate
        /// The refresh token stays and the answer carries none (Google).
        case keep
    }

    /// A wrong answer from the token endpoint, each one a thing real providers were seen to send.
    public enum Failure: Sendable, Equatable {
        /// 500 with a plain-text body.
        case serverError
        /// 200 with an HTML maintenance page.
        case html
        /// 200 with an empty body.
        case empty
        /// The dialect's `invalid_grant` error (Weibo's echoes the code, as the real one does).
        case invalidGrant
        /// 200 with JSON that has no `access_token`.
        case noAccessToken
        /// 200 with an error body (Weibo's `expired_token`; GitHub's `bad_verification_code`).
        case errorIn200
        /// 429 with this `Retry-After` value (RFC 6585 §4).
        case rateLimited(retryAfter: String)
        /// 400 `invalid_grant` whose description repeats the code, the verifier, the refresh token and the client secret.
        case echoingError

        /// The name used by `/_fake/control` and the `fake-provider` executable.
        public var name: String {
            switch self {
            case .serverError: "server_error"
            case .html: "html"
            case .empty: "empty"
            case .invalidGrant: "invalid_grant"
            case .noAccessToken: "no_access_token"
            case .errorIn200: "error_in_200"
            case .rateLimited: "rate_limited"
            case .echoingError: "echoing_error"
            }
        }

        /// Every failure, `rate_limited` with `Retry-After: 30`.
        public static let all: [Failure] = [
            .serverError, .html, .empty, .invalidGrant, .noAccessToken, .errorIn200,
            .rateLimited(retryAfter: "30"), .echoingError,
        ]

        /// The failure called `name` (`rate_limited` with `Retry-After: 30`), if any.
        public init?(name: String) {
            guard let found = Self.all.first(where: { $0.name == name }) else { return nil }
            self = found
        }
    }

    /// What the provider saw and issued, for tests to check.
    public struct Ledger: Sendable {
        /// Requests to the authorize endpoint (GET).
        public var authorizeCalls = 0
        /// `HOST PATH` of every request to the authorize, token, refresh, device, user and revocation endpoints, in
        /// order: `HOST` is the `Host` field it carried (RFC 9110 §7.2), so a test sees which per-account host
        /// (`acme.localhost:PORT`) the broker or the browser called.
        public var hostCalls: [String] = []
        /// Device authorization requests answered with codes.
        public var deviceAuthorizations = 0
        /// When each device poll came, by the provider's clock, in order.
        public var devicePolls: [Date] = []
        /// `slow_down` answers given.
        public var deviceSlowDowns = 0
        /// The `Referer` each authorize request carried (nil when none).
        public var authorizeReferers: [String?] = []
        /// Requests to the token endpoint, whatever their grant or outcome.
        public var tokenCalls = 0
        /// Codes exchanged for tokens.
        public var exchanges = 0
        /// Refresh grants received, whatever their outcome.
        public var refreshCalls = 0
        /// Refresh grants that presented an unknown or already used refresh token.
        public var stalePresentations = 0
        /// Client credentials grants from the authenticated client, whatever their outcome.
        public var clientCredentialsCalls = 0
        /// The `scope` each client credentials grant asked for (nil when none), in order.
        public var clientCredentialsScopes: [String?] = []
        /// Refresh grants being answered right now (waiting out ``Behaviour/refreshDelay`` included).
        public var refreshesInFlight = 0
        /// The most refresh grants that were ever being answered at once.
        public var maxRefreshesInFlight = 0
        /// Requests to the user endpoint.
        public var userCalls = 0
        /// Requests to the resource server under ``FakeOAuth2Provider/apiPrefix``, live token or not.
        public var apiCalls = 0
        /// Of those, the ones refused `401` for want of a live token.
        public var apiRefusals = 0
        /// Requests to the revocation endpoint.
        public var revokeCalls = 0
        /// Requests for the discovery document.
        public var discoveryCalls = 0
        /// Every access token issued, oldest first.
        public var accessTokens: [String] = []
        /// The refresh token issued last, if any.
        public var currentRefreshToken: String?
        /// Every token presented for revocation, in order.
        public var revoked: [String] = []
        /// Every PKCE `code_verifier` the token endpoint received, in order.
        public var verifiers: [String] = []
        /// Codes issued and not yet exchanged.
        public var openCodes = 0
        /// Every demand of the provider a request missed (its ``Quirks``, its PKCE policy, its client's credentials),
        /// in order, each naming the endpoint and what was wrong.
        public var violations: [String] = []
    }
}
