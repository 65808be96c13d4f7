import BrokerHTTP
import Foundation
import Synchronization

/// Twitter's OAuth 1.0a as api.twitter.com speaks it, in process or on a real socket (reference providers.md §2).
///
/// Every signed request is checked (``OAuth1SignatureCheck``): the HMAC-SHA1 signature is
/// recomputed over the request as received with the consumer secret and the secret this
/// fake issued for the token, and a mismatch or a used nonce (RFC 5849 §3.2) answers
/// `401 {"errors":[{"code":32,…}]}`. Token answers are form-encoded and labelled
/// `text/html;charset=utf-8` like the real ones. Request tokens are single use (§2.3).
public final class FakeTwitterProvider: Sendable {
    /// What the fake does wrong, on purpose.
    public enum Mode: Sendable, Equatable {
        /// Nothing.
        case ok
        /// `request_token` answers without `oauth_callback_confirmed=true`.
        case callbackNotConfirmed
        /// `request_token` answers `401 {"errors":[{"code":32,…}]}` whatever was sent.
        case requestTokenUnauthorized
        /// `request_token` answers the XML 403 with code 415 (callback URL not approved).
        case callbackNotApproved
        /// `access_token` answers the plain-text 401 about the verifier.
        case verifierRejected
        /// `verify_credentials` answers 403 code 453 (the free API tier).
        case verifyForbidden
    }

    /// What tests may change, and what the fake saw.
    public struct State: Sendable {
        /// The fault to show.
        public var mode = Mode.ok
        /// The label of token answers.
        public var contentType = "text/html;charset=utf-8"
        /// The user cancels at the authorize page: the callback gets `denied=TOKEN`.
        public var deny = false
        /// Requests to each endpoint.
        public var requestTokenCalls = 0, accessTokenCalls = 0, verifyCalls = 0
        /// Requests whose signature did not verify.
        public var signatureFailures = 0
        /// Requests to the API echo (``FakeTwitterProvider/apiEchoPrefix``), and those of them that verified.
        public var apiCalls = 0, apiVerified = 0
        /// The paths the browser was sent to (`/oauth/authorize` or `/oauth/authenticate`).
        public var authorizePaths: [String] = []
        /// The `oauth_callback` of every request token.
        public var callbacks: [String] = []
        var pending: [String: (secret: String, callback: String, verifier: String?)] = [:]
        var access: [String: String] = [:]
        var nonces: Set<String> = []
        var issued = 0
    }

    /// A resource route standing for the v1.1 REST API (any path under it, `GET` or `POST`), which the broker's API
    /// proxy calls: it answers what it verified, or Twitter's code 32 when the signature is not good.
    public static let apiEchoPrefix = "/1.1/echo/"
    /// The consumer key a fake takes unless told otherwise.
    public static let consumerKey = "cChZNFj6T5R0TigYB9yd1w"
    /// The user every access token is for.
    public static let userID = "6253282"
    /// The consumer key the client must use.
    public let consumerKey: String
    /// The consumer secret the client must sign with.
    public let consumerSecret: String
    /// Its routes, to call in process or to serve.
    public let router: Router
    /// The socket side.
    public let listener: FakeProviderServer
    let box: Box

    /// Holds the state the routes share.
    final class Box: Sendable {
        let state = Mutex(State())
    }

    /// The client credentials requests are checked against.
    struct Client: Sendable {
        let key: String
        let secret: String
    }

    /// Makes a fake that will listen on `host`:`port` once started.
    public init(consumerKey: String = FakeTwitterProvider.consumerKey, consumerSecret: String, host: String = "127.0.0.1", port: Int = 0) {
        self.consumerKey = consumerKey
        self.consumerSecret = consumerSecret
        let box = Box()
        self.box = box
        let client = Client(key: consumerKey, secret: consumerSecret)
        var router = Router()
        router.add(.POST, "/oauth/request_token", .sync({ Self.requestToken($0, box: box, client: client) }))
        for path in ["/oauth/authorize", "/oauth/authenticate"] {
            router.add(.GET, path, .sync({ Self.authorize($0, box: box) }))
        }
        router.add(.POST, "/oauth/access_token", .sync({ Self.accessToken($0, box: box, client: client) }))
        router.add(.GET, "/1.1/account/verify_credentials.json", .sync({ Self.verifyCredentials($0, box: box, client: client) }))
        for method in [HTTPMethod.GET, .POST] {
            router.add(method, prefix: Self.apiEchoPrefix, .sync({ Self.apiEcho($0, box: box, client: client) }))
        }
        self.router = router
        listener = FakeProviderServer(router: router, host: host, port: port)
    }

    /// Makes a fake and starts it on 127.0.0.1 with a port the kernel picks.
    public static func started(consumerSecret: String) throws -> FakeTwitterProvider {
        let fake = FakeTwitterProvider(consumerSecret: consumerSecret)
        try fake.start()
        return fake
    }

    /// Starts listening.
    public func start() throws { try listener.start() }
    /// Stops listening.
    public func stop() async { await listener.stop() }
    /// The bound port.
    public var port: Int { listener.port }
    /// `http://127.0.0.1:PORT`.
    public var baseURL: String { listener.baseURL }
    /// A copy of the state.
    public var state: State { box.state.withLock { $0 } }
    /// Changes the state.
    public func set(_ change: (inout State) -> Void) { box.state.withLock { change(&$0) } }

    /// The providers-file entry pointing the `twitter` preset at this fake; credentials come from the environment.
    /// With `api`, the API proxy's base is this fake too (plain HTTP on loopback, so `api_allow_private`).
    public func providerEntry(authenticate: Bool = false, api: Bool = false) -> String {
        var signIn = authenticate ? #", "authenticate_url": "\#(baseURL)/oauth/authenticate""# : ""
        if api { signIn += #", "api_base_url": "\#(baseURL)", "api_allow_private": true"# }
        return """
            "twitter": {"request_token_url": "\(baseURL)/oauth/request_token", "authorize_url": "\(baseURL)/oauth/authorize",
                        "access_token_url": "\(baseURL)/oauth/access_token",
                        "user_url": "\(baseURL)/1.1/account/verify_credentials.json?include_entities=false&skip_status=true"\(signIn)}
            """
    }

    // MARK: Endpoints

    static let couldNotAuthenticate = FakeWire.answer(
        .unauthorized, "application/json; charset=utf-8",
        #"{"errors":[{"code":32,"message":"Could not authenticate you."}]}"#)

    static func requestToken(_ request: Request, box: Box, client: Client) -> Response {
        let mode = box.state.withLock { s in
            s.requestTokenCalls += 1; return s.mode
        }
        switch mode {
        case .requestTokenUnauthorized: return couldNotAuthenticate
        case .callbackNotApproved:
            return FakeWire.answer(
                .forbidden, "application/xml;charset=utf-8",
                #"<?xml version="1.0" encoding="UTF-8"?><errors><error code="415">Callback URL not approved for this client application. Approved callback URLs can be adjusted in your application settings</error></errors>"#
            )
        default: break
        }
        guard let oauth = verified(request, box: box, client: client, tokenSecret: { _ in nil }),
            let callback = oauth["oauth_callback"]
        else { return couldNotAuthenticate }
        let (token, secret, confirmed, contentType) = box.state.withLock { s in
            s.issued += 1
            let token = "TWREQ\(s.issued)" + FakeWire.randomHex(16)
            let secret = "TW-REQUEST-SECRET-SENTINEL-\(s.issued)-\(FakeWire.randomHex(12))"
            s.pending[token] = (secret, callback, nil)
            s.callbacks.append(callback)
            return (token, secret, s.mode != .callbackNotConfirmed, s.contentType)
        }
        let body = "oauth_token=\(token)&oauth_token_secret=\(secret)" + (confirmed ? "&oauth_callback_confirmed=true" : "")
        return FakeWire.answer(.ok, contentType, body)
    }

    /// The consent step, approving (or, with `deny`, cancelling) at once; RFC 5849 §2.2 keeps the callback's own query.
    static func authorize(_ request: Request, box: Box) -> Response {
        guard let token = request.query("oauth_token") else {
            return FakeWire.answer(.badRequest, "text/html", "<html>no token</html>")
        }
        let outcome = box.state.withLock { s -> (callback: String, query: [(String, String)])? in
            s.authorizePaths.append(request.path)
            guard let entry = s.pending[token] else { return nil }
            if s.deny { return (entry.callback, [("denied", token)]) }
            let verifier = "TW-VERIFIER-SENTINEL-" + FakeWire.randomHex(16)
            s.pending[token]?.verifier = verifier
            return (entry.callback, [("oauth_token", token), ("oauth_verifier", verifier)])
        }
        guard let outcome else { return FakeWire.answer(.badRequest, "text/html", "<html>expired</html>") }
        return FakeWire.redirect(FakeWire.appendingQuery(outcome.callback, outcome.query))
    }

    static func accessToken(_ request: Request, box: Box, client: Client) -> Response {
        let mode = box.state.withLock { s in
            s.accessTokenCalls += 1; return s.mode
        }
        let lookup: (String) -> String? = { token in box.state.withLock { $0.pending[token]?.secret } }
        guard let oauth = verified(request, box: box, client: client, tokenSecret: lookup),
            let token = oauth["oauth_token"]
        else { return couldNotAuthenticate }
        // Temporary credentials are single use (RFC 5849 §2.3), whatever the outcome.
        let entry = box.state.withLock { $0.pending.removeValue(forKey: token) }
        guard mode != .verifierRejected, let verifier = entry?.verifier, oauth["oauth_verifier"] == verifier else {
            return FakeWire.answer(
                .unauthorized, "text/plain;charset=utf-8",
                "Error processing your OAuth request: Invalid oauth_verifier parameter")
        }
        let (accessToken, accessSecret, contentType) = box.state.withLock { s in
            let accessToken = "\(userID)-TW-ACCESS-SENTINEL-" + FakeWire.randomHex(16)
            let accessSecret = "TW-ACCESS-SECRET-SENTINEL-" + FakeWire.randomHex(16)
            s.access[accessToken] = accessSecret
            return (accessToken, accessSecret, s.contentType)
        }
        let body = "oauth_token=\(accessToken)&oauth_token_secret=\(accessSecret)&user_id=\(userID)&screen_name=twitterapi"
        return FakeWire.answer(.ok, contentType, body)
    }

    static func verifyCredentials(_ request: Request, box: Box, client: Client) -> Response {
        let mode = box.state.withLock { s in
            s.verifyCalls += 1; return s.mode
        }
        let lookup: (String) -> String? = { token in box.state.withLock { $0.access[token] } }
        guard verified(request, box: box, client: client, tokenSecret: lookup) != nil else {
            return couldNotAuthenticate
        }
        if mode == .verifyForbidden {
            return FakeWire.answer(
                .forbidden, "application/json;charset=utf-8",
                #"{"errors":[{"message":"You currently have access to a subset of X API V2 endpoints and limited v1.1 endpoints only.","code":453}]}"#
            )
        }
        return FakeWire.answer(
            .ok, "application/json;charset=utf-8",
            #"{"id":\#(userID),"id_str":"\#(userID)","name":"Twitter API","screen_name":"TwitterAPI","protected":false}"#)
    }

    /// The API echo: a request signed with an access token this fake issued (RFC 5849 §3.4, its query and a form body
    /// signed too) gets `200` with its method, the base URI it was signed for, the user and the signed request
    /// parameters; anything else Twitter's `401` code 32. The token and secrets are never echoed.
    static func apiEcho(_ request: Request, box: Box, client: Client) -> Response {
        box.state.withLock { $0.apiCalls += 1 }
        let lookup: (String) -> String? = { token in box.state.withLock { $0.access[token] } }
        guard verified(request, box: box, client: client, tokenSecret: lookup) != nil else { return couldNotAuthenticate }
        box.state.withLock { $0.apiVerified += 1 }
        let parameters = OAuth1SignatureCheck.requestParameters(request)
            .map { "[\(JSONString.quote($0.0)),\(JSONString.quote($0.1))]" }.joined(separator: ",")
        var json = #"{"method":"# + JSONString.quote(request.method.rawValue)
        json += #","base_uri":"# + JSONString.quote(OAuth1SignatureCheck.baseURI(request) ?? "")
        json += #","user_id":"\#(userID)","parameters":[\#(parameters)]}"#
        return FakeWire.answer(.ok, "application/json;charset=utf-8", json)
    }

    /// The verified `oauth_*` parameters of a request whose nonce is new; a failure is counted.
    /// `tokenSecret` maps an `oauth_token` to the secret issued for it (`request_token` takes none: nil refuses any).
    static func verified(
        _ request: Request, box: Box, client: Client,
        tokenSecret: (String) -> String?
    ) -> [String: String]? {
        var fields = OAuth1SignatureCheck.verify(
            request, consumerKey: client.key, consumerSecret: client.secret,
            tokenSecret: tokenSecret)
        // RFC 5849 §3.2: a used nonce is refused.
        if let nonce = fields?["oauth_nonce"], !box.state.withLock({ $0.nonces.insert(nonce).inserted }) { fields = nil }
        if fields == nil { box.state.withLock { $0.signatureFailures += 1 } }
        return fields
    }
}
