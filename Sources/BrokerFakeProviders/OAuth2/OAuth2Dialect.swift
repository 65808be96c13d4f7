import BrokerHTTP

/// How an OAuth 2.0 provider spells the same protocol: its paths, labels and error bodies.
public enum OAuth2Dialect: String, Sendable, Equatable, CaseIterable {
    /// RFC 6749 as GitHub Apps and Google speak it: JSON labelled as JSON, `{"error": …}` bodies (§5.1, §5.2),
    /// the user endpoint takes a Bearer token (RFC 6750 §2.1), revocation per RFC 7009.
    case rfc6749 = "oauth2"
    /// Sina Weibo (reference providers.md §1): token answers are JSON labelled `text/plain;charset=UTF-8`
    /// with `uid` and `remind_in` as strings, errors carry numeric `error_code`s, the user id comes from
    /// `2/account/get_uid.json` and revocation from `oauth2/revokeoauth2`.
    case weibo

    /// The endpoint paths.
    public struct Paths: Sendable, Equatable {
        /// The authorize endpoint: GET asks, POST takes the consent page's answer.
        public var authorize: String
        /// The token endpoint (code exchange and refresh).
        public var token: String
        /// A second endpoint taking the refresh grant (Figma's), beside the token endpoint; nil when there is none.
        public var refresh: String?
        /// The endpoint naming the user of an access token; nil when the provider has none.
        public var user: String?
        /// The revocation endpoint; nil when the provider has none.
        public var revoke: String?

        /// Paths as given.
        public init(authorize: String, token: String, refresh: String? = nil, user: String?, revoke: String?) {
            self.authorize = authorize
            self.token = token
            self.refresh = refresh
            self.user = user
            self.revoke = revoke
        }
    }

    /// Where each endpoint is.
    public var paths: Paths {
        switch self {
        case .rfc6749: Paths(authorize: "/authorize", token: "/token", user: "/user", revoke: "/revoke")
        case .weibo:
            Paths(
                authorize: "/oauth2/authorize", token: "/oauth2/access_token",
                user: "/2/account/get_uid.json", revoke: "/oauth2/revokeoauth2")
        }
    }

    /// The `Content-Type` of token answers and errors.
    var jsonLabel: String {
        switch self {
        case .rfc6749: "application/json;charset=UTF-8"
        case .weibo: "text/plain;charset=UTF-8"
        }
    }

    /// Fields every token answer and error carries: RFC 6749 §5.1 forbids caching; Weibo names its server.
    var answerFields: [(String, String)] {
        switch self {
        case .rfc6749: [("Cache-Control", "no-store"), ("Pragma", "no-cache")]
        case .weibo: [("Server", "weibo")]
        }
    }

    /// Weibo's number for an OAuth error code (its "OAuth2.0 错误码" table).
    static func weiboNumber(_ error: String) -> Int {
        [
            "redirect_uri_mismatch": 21322, "invalid_request": 21323, "invalid_client": 21324, "invalid_grant": 21325,
            "unauthorized_client": 21326, "expired_token": 21327, "unsupported_grant_type": 21328,
            "unsupported_response_type": 21329, "access_denied": 21330, "temporarily_unavailable": 21331,
        ][error] ?? 21323
    }

    /// A successful token answer (RFC 6749 §5.1; Weibo's real field order and types).
    func tokenAnswer(_ grant: IssuedTokens) -> Response {
        var body: String
        switch self {
        case .rfc6749:
            body = "{\"access_token\":\(JSONString.quote(grant.accessToken)),\"token_type\":\"bearer\""
            if grant.sendsExpiresIn { body += ",\"expires_in\":\(grant.expiresIn)" }
            if let refresh = grant.refreshToken { body += ",\"refresh_token\":\(JSONString.quote(refresh))" }
            if let lifetime = grant.refreshTokenExpiresIn { body += ",\"refresh_token_expires_in\":\(lifetime)" }
            if let scope = grant.scope { body += ",\"scope\":\(JSONString.quote(scope))" }
            if let idToken = grant.idToken { body += ",\"id_token\":\(JSONString.quote(idToken))" }
            for name in grant.extraFields.keys.sorted() { body += ",\(JSONString.quote(name)):\(grant.extraFields[name]!)" }
        case .weibo:
            body =
                "{\"access_token\":\(JSONString.quote(grant.accessToken)),\"remind_in\":\"\(grant.expiresIn)\","
                + "\"expires_in\":\(grant.expiresIn),\"uid\":\(JSONString.quote(grant.uid)),\"isRealName\":\"true\""
            if let refresh = grant.refreshToken { body += ",\"refresh_token\":\(JSONString.quote(refresh))" }
            if let scope = grant.scope { body += ",\"scope\":\(JSONString.quote(scope))" }
        }
        return FakeWire.answer(.ok, jsonLabel, body + "}", extra: answerFields)
    }

    /// A token-endpoint error (RFC 6749 §5.2): 400, or 401 for `invalid_client` (with `WWW-Authenticate` when the
    /// client used HTTP Basic). Weibo adds its `error_code`, `request` and `error_uri`.
    func tokenError(_ error: String, _ description: String, basic: Bool = false) -> Response {
        let status: HTTPStatus = error == "invalid_client" ? .unauthorized : .badRequest
        var extra = answerFields
        if basic && error == "invalid_client" { extra.append(("WWW-Authenticate", "Basic realm=\"fake-provider\"")) }
        return FakeWire.answer(status, jsonLabel, errorBody(error, description, request: paths.token), extra: extra)
    }

    /// The JSON of an error.
    func errorBody(_ error: String, _ description: String, request: String) -> String {
        switch self {
        case .rfc6749:
            return "{\"error\":\(JSONString.quote(error)),\"error_description\":\(JSONString.quote(description))}"
        case .weibo:
            return
                "{\"error\":\(JSONString.quote(error)),\"error_code\":\(Self.weiboNumber(error)),\"request\":\(JSONString.quote(request)),"
                + "\"error_uri\":\(JSONString.quote(request)),\"error_description\":\(JSONString.quote(description))}"
        }
    }

    /// The query an authorization error adds to the redirect URI (RFC 6749 §4.1.2.1; Weibo's real denial, field order kept).
    func authorizationError(_ error: String, _ description: String, state: String?) -> [(String, String)] {
        var pairs: [(String, String)]
        switch self {
        case .rfc6749:
            pairs = [("error", error), ("error_description", description)]
        case .weibo:
            pairs = [
                ("error_uri", paths.authorize), ("error", error), ("error_description", description),
                ("error_code", String(Self.weiboNumber(error))),
            ]
        }
        if let state { pairs.append(("state", state)) }
        return pairs
    }

    /// What the user endpoint answers for `uid` (GitHub's `/user` shape; Weibo's `get_uid.json`, the uid a number).
    func userAnswer(uid: String, login: String?, name: String?, email: String? = nil) -> Response {
        let id = Int(uid).map(String.init) ?? JSONString.quote(uid)
        switch self {
        case .rfc6749:
            var body = "{\"id\":\(id)"
            if let login { body += ",\"login\":\(JSONString.quote(login))" }
            if let name { body += ",\"name\":\(JSONString.quote(name))" }
            if let email { body += ",\"email\":\(JSONString.quote(email))" }
            return FakeWire.answer(.ok, "application/json;charset=UTF-8", body + "}")
        case .weibo:
            return FakeWire.answer(.ok, "application/json;charset=UTF-8", "{\"uid\":\(id)}")
        }
    }

    /// The user endpoint's refusal of a missing, unknown, expired or revoked token.
    func userRefusal() -> Response {
        switch self {
        case .rfc6749:
            // RFC 6750 §3: the challenge names the problem.
            return FakeWire.answer(
                .unauthorized, "application/json;charset=UTF-8", "{\"message\":\"Bad credentials\"}",
                extra: [("WWW-Authenticate", "Bearer error=\"invalid_token\"")])
        case .weibo:
            return FakeWire.answer(
                .unauthorized, "application/json;charset=UTF-8",
                "{\"error\":\"expired_token\",\"error_code\":21327,\"request\":\"/2/account/get_uid.json\"}")
        }
    }

    /// What revocation answers: RFC 7009 §2.2 an empty 200 whether or not the token was known; Weibo `{"result":"true"}`.
    func revokeAnswer() -> Response {
        switch self {
        case .rfc6749: Response(status: .ok, headers: HTTPHeaders([("Cache-Control", "no-store")]))
        case .weibo: FakeWire.answer(.ok, jsonLabel, "{\"result\":\"true\"}")
        }
    }

    /// The answer of a ``FakeOAuth2Provider/Failure`` for a token request carrying `form`, under `clientSecret`.
    func failure(_ failure: FakeOAuth2Provider.Failure, form: [String: String], clientSecret: String, uid: String) -> Response {
        switch failure {
        case .serverError:
            return FakeWire.answer(.internalServerError, "text/plain;charset=UTF-8", "upstream trouble")
        case .html:
            return FakeWire.answer(.ok, "text/html;charset=UTF-8", "<html><body>maintenance</body></html>")
        case .empty:
            return FakeWire.answer(.ok, jsonLabel, "")
        case .invalidGrant:
            let description =
                self == .weibo ? "invalid authorization code:" + (form["code"] ?? "") : "The grant is invalid, expired or revoked."
            return tokenError("invalid_grant", description)
        case .noAccessToken:
            let body =
                self == .weibo
                ? "{\"expires_in\":3600,\"uid\":\(JSONString.quote(uid))}" : "{\"token_type\":\"bearer\",\"expires_in\":3600}"
            return FakeWire.answer(.ok, jsonLabel, body, extra: answerFields)
        case .errorIn200:
            let body =
                self == .weibo
                ? "{\"error\":\"expired_token\",\"error_code\":21327}"
                : "{\"error\":\"bad_verification_code\",\"error_description\":\"The code passed is incorrect or expired.\"}"
            return FakeWire.answer(.ok, jsonLabel, body, extra: answerFields)
        case .rateLimited(let retryAfter):
            return FakeWire.answer(
                HTTPStatus(429, "Too Many Requests"), "text/plain;charset=UTF-8", "slow down",
                extra: [("Retry-After", retryAfter)])
        case .echoingError:
            let echoed =
                "code \(form["code"] ?? "") with verifier \(form["code_verifier"] ?? "") and refresh token "
                + "\(form["refresh_token"] ?? "") for a client whose secret is \(clientSecret)"
            return tokenError("invalid_grant", echoed)
        }
    }
}

/// What one successful grant hands out.
struct IssuedTokens {
    var accessToken: String
    var refreshToken: String?
    var expiresIn: Int
    var uid: String
    var scope: String?
    /// Whether the tokens answer the refresh grant.
    var refreshing = false
    /// The authorization request's OpenID Connect `nonce`.
    var nonce: String?
    /// The ID token that goes with a code exchange's answer (an OpenID provider's).
    var idToken: String?
    /// Whether the answer states `expires_in` (Salesforce and Zendesk do not).
    var sendsExpiresIn = true
    /// The refresh token's lifetime, sent as `refresh_token_expires_in` (GitHub Apps); nil sends none.
    var refreshTokenExpiresIn: Int?
    /// Further top-level members, name to JSON value text, sorted by name on the wire.
    var extraFields: [String: String] = [:]
}
