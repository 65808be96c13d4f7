import BrokerCore
import BrokerHTTP
import Foundation
import Synchronization

/// An in-process Twitter speaking OAuth 1.0a as api.twitter.com does, on a real socket.
///
/// Every signed request is checked: the `Authorization: OAuth` header is parsed,
/// the HMAC-SHA1 signature recomputed over the request as received (method, this
/// server's URL and query, form body) with the consumer secret and the token
/// secret this fake issued, and a mismatch or a reused nonce answers
/// `401 {"errors":[{"code":32,…}]}`. Token answers are form-encoded, labelled
/// `text/html;charset=utf-8` like the real ones (providers.md §2).
final class FakeTwitter: Sendable {
    /// What the fake does wrong, on purpose.
    enum Mode: Sendable {
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

    struct State {
        var port = 0
        var mode = Mode.ok
        var contentType = "text/html;charset=utf-8"
        var deny = false
        var requestTokenCalls = 0
        var accessTokenCalls = 0
        var verifyCalls = 0
        var signatureFailures = 0
        var authorizePaths: [String] = []
        var callbacks: [String] = []
        /// Request token → its secret, the callback it was issued for, and the verifier once approved.
        var pending: [String: (secret: String, callback: String, verifier: String?)] = [:]
        /// Access token → its secret.
        var access: [String: String] = [:]
        var nonces: Set<String> = []
        var issued = 0
    }

    static let consumerKey = "cChZNFj6T5R0TigYB9yd1w"
    static let userID = "6253282"
    let consumerSecret: String
    let server: HTTPServer
    let box: StateBox

    /// Holds the fake's counters and modes; route closures share it.
    final class StateBox: Sendable {
        let state = Mutex(State())
    }

    /// Starts on 127.0.0.1:0; `consumerSecret` is what the broker must sign with.
    init(consumerSecret: String) throws {
        self.consumerSecret = consumerSecret
        let box = StateBox()
        self.box = box
        var router = Router()
        let secret = consumerSecret
        router.add(.POST, "/oauth/request_token", .sync({ request in
            FakeTwitter.requestToken(request, box: box, consumerSecret: secret)
        }))
        for path in ["/oauth/authorize", "/oauth/authenticate"] {
            router.add(.GET, path, .sync({ request in FakeTwitter.authorize(request, box: box) }))
        }
        router.add(.POST, "/oauth/access_token", .sync({ request in
            FakeTwitter.accessToken(request, box: box, consumerSecret: secret)
        }))
        router.add(.GET, "/1.1/account/verify_credentials.json", .sync({ request in
            FakeTwitter.verifyCredentials(request, box: box, consumerSecret: secret)
        }))
        server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0), router: router)
        try server.start()
        let port = server.port
        box.state.withLock { $0.port = port }
    }

    var base: String { "http://127.0.0.1:\(server.port)" }
    var requestTokenCalls: Int { box.state.withLock { $0.requestTokenCalls } }
    var accessTokenCalls: Int { box.state.withLock { $0.accessTokenCalls } }
    var verifyCalls: Int { box.state.withLock { $0.verifyCalls } }
    var signatureFailures: Int { box.state.withLock { $0.signatureFailures } }
    var authorizePaths: [String] { box.state.withLock { $0.authorizePaths } }
    var callbacks: [String] { box.state.withLock { $0.callbacks } }
    func set(_ change: @Sendable (inout State) -> Void) { box.state.withLock { change(&$0) } }

    /// The providers-file entry pointing the `twitter` preset at this fake; credentials come from the environment.
    func providerEntry(authenticate: Bool = false) -> String {
        let signIn = authenticate ? #", "authenticate_url": "\#(base)/oauth/authenticate""# : ""
        return """
        "twitter": {"request_token_url": "\(base)/oauth/request_token", "authorize_url": "\(base)/oauth/authorize",
                    "access_token_url": "\(base)/oauth/access_token",
                    "user_url": "\(base)/1.1/account/verify_credentials.json?include_entities=false&skip_status=true"\(signIn)}
        """
    }

    // MARK: Endpoints

    static func requestToken(_ request: Request, box: StateBox, consumerSecret: String) -> Response {
        let mode = box.state.withLock { s in s.requestTokenCalls += 1; return s.mode }
        switch mode {
        case .requestTokenUnauthorized: return couldNotAuthenticate
        case .callbackNotApproved:
            return Response(status: .forbidden, headers: HTTPHeaders([("Content-Type", "application/xml;charset=utf-8")]), body: Array(
                #"<?xml version="1.0" encoding="UTF-8"?><errors><error code="415">Callback URL not approved for this client application. Approved callback URLs can be adjusted in your application settings</error></errors>"#.utf8))
        default: break
        }
        guard let oauth = verifiedParameters(request, box: box, consumerSecret: consumerSecret, tokenSecret: { _ in "" }),
              let callback = oauth["oauth_callback"] else { return couldNotAuthenticate }
        let (token, secret, confirmed, contentType) = box.state.withLock { s in
            s.issued += 1
            let token = "TWREQ\(s.issued)" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
            let secret = "TW-REQUEST-SECRET-SENTINEL-\(s.issued)-\(UUID().uuidString)"
            s.pending[token] = (secret, callback, nil)
            s.callbacks.append(callback)
            return (token, secret, s.mode != .callbackNotConfirmed, s.contentType)
        }
        let body = "oauth_token=\(token)&oauth_token_secret=\(secret)" + (confirmed ? "&oauth_callback_confirmed=true" : "")
        return Response(status: .ok, headers: HTTPHeaders([("Content-Type", contentType)]), body: Array(body.utf8))
    }

    /// The consent page, approving (or, with `deny`, cancelling) at once; RFC 5849 §2.2 keeps the callback's own query.
    static func authorize(_ request: Request, box: StateBox) -> Response {
        guard let token = request.query("oauth_token") else {
            return Response(status: .badRequest, headers: HTTPHeaders([("Content-Type", "text/html")]), body: Array("<html>no token</html>".utf8))
        }
        let outcome = box.state.withLock { s -> (callback: String, query: String)? in
            s.authorizePaths.append(request.path)
            guard let entry = s.pending[token] else { return nil }
            if s.deny { return (entry.callback, "denied=\(token)") }
            let verifier = "TW-VERIFIER-SENTINEL-\(UUID().uuidString)"
            s.pending[token]?.verifier = verifier
            return (entry.callback, "oauth_token=\(token)&oauth_verifier=\(verifier)")
        }
        guard let outcome else {
            return Response(status: .badRequest, headers: HTTPHeaders([("Content-Type", "text/html")]), body: Array("<html>expired</html>".utf8))
        }
        let separator = outcome.callback.contains("?") ? "&" : "?"
        return Response(status: .found, headers: HTTPHeaders([("Location", outcome.callback + separator + outcome.query)]))
    }

    static func accessToken(_ request: Request, box: StateBox, consumerSecret: String) -> Response {
        let mode = box.state.withLock { s in s.accessTokenCalls += 1; return s.mode }
        let lookup: @Sendable (String) -> String? = { token in box.state.withLock { $0.pending[token]?.secret } }
        guard let oauth = verifiedParameters(request, box: box, consumerSecret: consumerSecret, tokenSecret: lookup),
              let token = oauth["oauth_token"] else { return couldNotAuthenticate }
        // Temporary credentials are single use (RFC 5849 §2.3), whatever the outcome.
        let entry = box.state.withLock { $0.pending.removeValue(forKey: token) }
        guard mode != .verifierRejected, let verifier = entry?.verifier, oauth["oauth_verifier"] == verifier else {
            return Response(status: .unauthorized, headers: HTTPHeaders([("Content-Type", "text/plain;charset=utf-8")]),
                            body: Array("Error processing your OAuth request: Invalid oauth_verifier parameter".utf8))
        }
        let (accessToken, accessSecret, contentType) = box.state.withLock { s in
            let accessToken = "\(userID)-TW-ACCESS-SENTINEL-\(UUID().uuidString)"
            let accessSecret = "TW-ACCESS-SECRET-SENTINEL-\(UUID().uuidString)"
            s.access[accessToken] = accessSecret
            return (accessToken, accessSecret, s.contentType)
        }
        let body = "oauth_token=\(accessToken)&oauth_token_secret=\(accessSecret)&user_id=\(userID)&screen_name=twitterapi"
        return Response(status: .ok, headers: HTTPHeaders([("Content-Type", contentType)]), body: Array(body.utf8))
    }

    static func verifyCredentials(_ request: Request, box: StateBox, consumerSecret: String) -> Response {
        let mode = box.state.withLock { s in s.verifyCalls += 1; return s.mode }
        let lookup: @Sendable (String) -> String? = { token in box.state.withLock { $0.access[token] } }
        guard verifiedParameters(request, box: box, consumerSecret: consumerSecret, tokenSecret: lookup) != nil else {
            return couldNotAuthenticate
        }
        let json = HTTPHeaders([("Content-Type", "application/json;charset=utf-8")])
        if mode == .verifyForbidden {
            return Response(status: .forbidden, headers: json, body: Array(
                #"{"errors":[{"message":"You currently have access to a subset of X API V2 endpoints and limited v1.1 endpoints only.","code":453}]}"#.utf8))
        }
        return Response(status: .ok, headers: json, body: Array(
            #"{"id":\#(userID),"id_str":"\#(userID)","name":"Twitter API","screen_name":"TwitterAPI","protected":false}"#.utf8))
    }

    // MARK: Signature check

    static let couldNotAuthenticate = Response(status: .unauthorized, headers: HTTPHeaders([("Content-Type", "application/json; charset=utf-8")]),
                                               body: Array(#"{"errors":[{"code":32,"message":"Could not authenticate you."}]}"#.utf8))

    /// The request's OAuth parameters when its signature is right for the consumer secret and the secret of its
    /// `oauth_token` (`tokenSecret` maps a token to the secret this fake issued; "" when there is no token); else nil.
    static func verifiedParameters(_ request: Request, box: StateBox, consumerSecret: String,
                                   tokenSecret: @Sendable (String) -> String?) -> [String: String]? {
        let verdict = check(request, box: box, consumerSecret: consumerSecret, tokenSecret: tokenSecret)
        if verdict == nil { box.state.withLock { $0.signatureFailures += 1 } }
        return verdict
    }

    private static func check(_ request: Request, box: StateBox, consumerSecret: String,
                              tokenSecret: @Sendable (String) -> String?) -> [String: String]? {
        guard let header = request.headers["Authorization"], let pairs = OAuth1Signer.parseAuthorizationHeader(header) else { return nil }
        let oauth = Dictionary(pairs, uniquingKeysWith: { first, _ in first })
        guard pairs.count == oauth.count, oauth["oauth_consumer_key"] == consumerKey, oauth["oauth_signature_method"] == "HMAC-SHA1",
              let sent = oauth["oauth_signature"], let nonce = oauth["oauth_nonce"], !nonce.isEmpty,
              let timestamp = oauth["oauth_timestamp"], Int(timestamp) != nil else { return nil }
        let secret: String?
        if let token = oauth["oauth_token"] {
            guard let issued = tokenSecret(token) else { return nil }
            secret = issued
        } else {
            secret = nil
        }
        var signed = pairs.filter { $0.0 != "oauth_signature" }
        if request.headers["Content-Type"]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true {
            signed += URLEncodedForm.parse(String(decoding: request.body, as: UTF8.self)).map { ($0.name, $0.value) }
        }
        let port = box.state.withLock { $0.port }
        let url = "http://127.0.0.1:\(port)\(request.path)" + (request.head.query.map { "?" + $0 } ?? "")
        let base = OAuth1Signer.signatureBaseString(method: request.method.rawValue, url: url, parameters: signed)
        guard OAuth1Signer.signature(baseString: base, consumerSecret: consumerSecret, tokenSecret: secret) == sent else { return nil }
        // RFC 5849 §3.2: a used nonce is refused.
        let fresh = box.state.withLock { $0.nonces.insert(nonce).inserted }
        return fresh ? oauth : nil
    }
}
