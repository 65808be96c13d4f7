import BrokerHTTP
import Foundation

/// An OAuth 2.0 authorization server speaking RFC 6749 or Sina Weibo's dialect, in process or on a real socket.
///
/// One implementation serves the tests, the benchmarks, the hardening scripts (as the
/// `fake-provider` executable) and `token-broker demo`. It checks what a real server
/// checks: the client and its redirect URI before anything else, never redirecting to an
/// unregistered one (RFC 6749 §4.1.2.1); single-use codes that live ten minutes, bound to
/// their redirect URI (§4.1.3); PKCE S256, refusing a verifier for a code issued without a
/// challenge (RFC 7636 §4.6, RFC 9700 §2.1.1); client authentication by form or HTTP Basic
/// (§2.3.1); refresh tokens, rotated or kept (§6); live Bearer tokens at the user endpoint
/// (RFC 6750 §2.1); revocation (RFC 7009). It does wrong only what ``Behaviour`` asks for.
/// Configured with ``Configuration/paths`` and ``Configuration/quirks``, it is any one of the
/// catalogue's providers: their endpoints, their demands on the client and their answers.
public final class FakeOAuth2Provider: Sendable {
    /// What the provider is.
    public let configuration: Configuration
    /// Its routes, to call in process (``Router/respond(to:)``) or to serve.
    public let router: Router
    /// The socket side; nothing listens until ``start()``.
    public let listener: FakeProviderServer
    let endpoints: OAuth2Endpoints
    /// The events its API's `/events` route sends, as a test pushes them.
    public let events = FakeAPIEvents()
    /// Where its resource server (the API the broker's proxy calls) lives: `<baseURL>/_api/…`.
    public static let apiPrefix = "/_api/"

    /// Makes a provider for `configuration` that will listen on `host`:`port` once started.
    public init(_ configuration: Configuration, behaviour: Behaviour? = nil, host: String = "127.0.0.1", port: Int = 0) {
        self.configuration = configuration
        endpoints = OAuth2Endpoints(
            OAuth2ProviderState(
                configuration: configuration,
                behaviour: behaviour ?? Behaviour(dialect: configuration.dialect)))
        var router = Self.routes(configuration, endpoints)
        OAuth2Endpoints.addAPI(to: &router, prefix: Self.apiPrefix, endpoints: endpoints, events: events)
        self.router = router
        listener = FakeProviderServer(router: router, host: host, port: port)
    }

    /// Makes a provider and starts it on 127.0.0.1 with a port the kernel picks.
    public static func started(_ configuration: Configuration, behaviour: Behaviour? = nil) throws -> FakeOAuth2Provider {
        let provider = FakeOAuth2Provider(configuration, behaviour: behaviour)
        try provider.start()
        return provider
    }

    /// Starts listening.
    public func start() throws { try listener.start() }

    /// Stops listening and closes every connection.
    public func stop() async { await listener.stop() }

    /// The bound port.
    public var port: Int { listener.port }

    /// `http://127.0.0.1:PORT`.
    public var baseURL: String { listener.baseURL }

    /// Changes the behaviour; takes effect from the next request.
    public func set(_ change: (inout Behaviour) -> Void) {
        endpoints.state.withLock { change(&$0.behaviour) }
    }

    /// The behaviour now.
    public var behaviour: Behaviour { endpoints.state.withLock { $0.behaviour } }

    /// What the provider saw and issued so far.
    public var ledger: Ledger { endpoints.state.withLock { $0.ledger } }

    /// Requests to the token endpoint so far.
    public var tokenCalls: Int { ledger.tokenCalls }
    /// Refresh grants received so far.
    public var refreshCalls: Int { ledger.refreshCalls }
    /// Client credentials grants from the authenticated client so far.
    public var clientCredentialsCalls: Int { ledger.clientCredentialsCalls }
    /// Requests to the revocation endpoint so far.
    public var revokeCalls: Int { ledger.revokeCalls }
    /// Every access token issued, oldest first.
    public var accessTokens: [String] { ledger.accessTokens }
    /// The most refresh grants the provider was ever answering at once.
    public var maxRefreshesInFlight: Int { ledger.maxRefreshesInFlight }

    /// Grants for `uid` as if the user had signed in earlier, without a flow: the access token, the refresh token
    /// (nil when the behaviour issues none) and the access token's lifetime in seconds.
    public func grantWithoutFlow(uid: String, scope: String? = nil) -> (accessToken: String, refreshToken: String?, expiresIn: Int) {
        let tokens = endpoints.state.withLock { $0.grantWithoutFlow(uid: uid, scope: scope) }
        return (tokens.accessToken, tokens.refreshToken, tokens.expiresIn)
    }

    /// The providers-file entry `"NAME": {…}` pointing a provider at this fake; the client secret is read from
    /// the environment variable `secretVariable`. Weibo's entry overrides the `weibo` preset; others are custom
    /// (`kind` `oauth2`), with `pkce` when the provider requires it. `extra` is added inside the object.
    public func providerEntry(name: String? = nil, secretVariable: String? = nil, extra: String = "") -> String {
        let dialect = configuration.dialect
        let name = name ?? (dialect == .weibo ? "weibo" : "acme")
        let variable = secretVariable ?? (dialect == .weibo ? "FAKE_WEIBO_SECRET" : "FAKE_ACME_SECRET")
        let paths = configuration.paths
        var fields = [
            ("client_id", JSONString.quote(configuration.clientID)),
            ("client_secret", JSONString.quote("${" + variable + "}")),
            ("authorize_url", JSONString.quote(baseURL + paths.authorize)),
            ("token_url", JSONString.quote(baseURL + paths.token)),
        ]
        if let refresh = paths.refresh { fields.append(("refresh_url", JSONString.quote(baseURL + refresh))) }
        if let user = paths.user { fields.append(("user_url", JSONString.quote(baseURL + user))) }
        if let revoke = paths.revoke { fields.append(("revoke_url", JSONString.quote(baseURL + revoke))) }
        if !(dialect == .weibo && name == "weibo") { fields.insert(("kind", "\"oauth2\""), at: 0) }
        if dialect == .weibo && name != "weibo" { fields.append(("user_id_field", "\"uid\"")) }
        if configuration.pkce == .required { fields.append(("pkce", "true")) }
        return Self.entry(name: name, fields: fields, extra: extra)
    }

    /// The entry with device sign-in: `device_authorization_url` at this fake, `http:` verification URIs allowed.
    public func deviceProviderEntry(name: String? = nil, extra: String = "") -> String {
        let device = "\"device_authorization_url\": \(JSONString.quote(baseURL + OAuth2Endpoints.devicePath)), \"device_allow_http\": true"
        return providerEntry(name: name, extra: extra.isEmpty ? device : device + ", " + extra)
    }

    /// The entry with its defaults.
    public var providerEntry: String { providerEntry() }

    /// A machine-to-machine providers-file entry `"NAME": {…}` for this fake's client credentials grant: `kind`,
    /// client id and secret (from `secretVariable`), `token_url` and `"grant": "client_credentials"`, nothing else.
    /// `extra` is added inside the object.
    public func appTokenEntry(name: String = "acme-app", secretVariable: String = "FAKE_ACME_SECRET", extra: String = "") -> String {
        Self.entry(
            name: name,
            fields: [
                ("kind", "\"oauth2\""), ("client_id", JSONString.quote(configuration.clientID)),
                ("client_secret", JSONString.quote("${" + secretVariable + "}")),
                ("token_url", JSONString.quote(baseURL + configuration.paths.token)), ("grant", "\"client_credentials\""),
            ], extra: extra)
    }

    /// The providers-file entry `"NAME": {"kind": "oidc", "issuer": …}` of this fake as an OpenID provider (``Configuration/openID``):
    /// the issuer and the client alone, everything else from the discovery document. `extra` is added inside the object.
    public func oidcProviderEntry(name: String = "acme", secretVariable: String = "FAKE_ACME_SECRET", extra: String = "") -> String {
        Self.entry(
            name: name,
            fields: [
                ("kind", "\"oidc\""), ("issuer", JSONString.quote(baseURL)),
                ("client_id", JSONString.quote(configuration.clientID)),
                ("client_secret", JSONString.quote("${" + secretVariable + "}")),
            ], extra: extra)
    }

    /// `"NAME": {fields…, extra}`, each field's value already JSON.
    private static func entry(name: String, fields: [(String, String)], extra: String) -> String {
        let object = fields.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + (extra.isEmpty ? "" : ", " + extra)
        return "\(JSONString.quote(name)): {\(object)}"
    }

    /// The base of its resource server for a providers file's `api_base_url`: `<baseURL>/_api`.
    public var apiBaseURL: String { baseURL + Self.apiPrefix.dropLast() }

    /// Revokes one access token alone (RFC 7009 §2.1), as a user or the provider's own security team may: the API
    /// refuses it from now on, while the grant's refresh token still works.
    public func revokeAccessToken(_ token: String) {
        endpoints.state.withLock { $0.revoke(token) }
    }

    /// A whole providers file holding only ``providerEntry(name:secretVariable:extra:)``.
    public func providersFile(name: String? = nil, secretVariable: String? = nil) -> String {
        "{\"providers\": {\(providerEntry(name: name, secretVariable: secretVariable))}}"
    }

    /// The routes of `configuration`'s paths, served by `endpoints`.
    private static func routes(_ configuration: Configuration, _ endpoints: OAuth2Endpoints) -> Router {
        let paths = configuration.paths
        var router = Router()
        // Each handler notes the `Host` it was asked under (``Ledger/hostCalls``) before it answers.
        func noted(_ handler: @escaping @Sendable (Request) -> Response) -> Router.Handler {
            .sync { request in
                endpoints.noteHost(request)
                return handler(request)
            }
        }
        func notedAsync(_ handler: @escaping @Sendable (Request) async -> Response) -> Router.Handler {
            .async { request in
                endpoints.noteHost(request)
                return await handler(request)
            }
        }
        router.add(.GET, paths.authorize, noted(endpoints.authorize))
        router.add(.POST, paths.authorize, .sync(endpoints.decide))
        router.add(.POST, paths.token, notedAsync(endpoints.token))
        router.add(.POST, OAuth2Endpoints.devicePath, noted(endpoints.deviceAuthorization))
        if let refresh = paths.refresh, refresh != paths.token { router.add(.POST, refresh, notedAsync(endpoints.token)) }
        if let user = paths.user {
            router.add(.GET, user, noted(endpoints.user))
            // A user endpoint asked by POST (a GraphQL query, RFC 7662 introspection) answers POST too, to check how it was asked.
            if configuration.quirks.userRequest != nil { router.add(.POST, user, noted(endpoints.user)) }
        }
        if let revoke = paths.revoke {
            router.add(.POST, revoke, noted(endpoints.revoke))
            if configuration.dialect == .weibo {
                // Weibo documents GET as well as POST for revokeoauth2.
                router.add(.GET, revoke, noted(endpoints.revoke))
            }
        }
        for path in configuration.quirks.resources.keys.sorted() { router.add(.GET, path, .sync(endpoints.resource)) }
        if configuration.openID {
            router.add(.GET, OAuth2Endpoints.discoveryPath(configuration), .sync(endpoints.discovery))
        }
        if configuration.controlRoutes {
            router.add(.GET, "/_fake/stats", .sync(endpoints.stats))
            router.add(.POST, "/_fake/control", .sync(endpoints.control))
        }
        return router
    }
}
