import BrokerCore
import BrokerCrypto
import BrokerHTTP
import Foundation

extension FakeOAuth2Server {
    /// How one provider speaks OAuth 2.0 on the wire, so the fake can speak it and hold the broker to it.
    ///
    /// The default is the RFC 6749 shape the fake always spoke (`/authorize`,
    /// `/token`, `/user`, `/revoke`, credentials in the form). A catalogue
    /// dialect (``CatalogueCase``) serves the provider's real endpoints as
    /// `/<host><path>` (the broker's calls arrive through ``HostRewritingUpstream``), demands its client authentication, body format, parameters and
    /// headers, and answers in its field names and error shape. Every demand the
    /// broker misses is recorded in ``State/violations`` and refused.
    struct Dialect: Sendable {
        /// How the client authenticates at the token endpoint.
        enum ClientAuth: Sendable { case body, basic }
        /// How the user endpoint must be asked.
        enum UserAsk: Sendable {
            /// `GET` with `Authorization: <scheme> <token>`.
            case get(scheme: String)
            /// `POST` of a JSON body that must contain `containing`, with a Bearer token.
            case jsonPost(containing: String)
            /// RFC 7662: a form POST of `token` with the client's credentials.
            case introspection
        }
        /// What accompanies the token at the revocation endpoint; `any` checks nothing (the fake's own dialect).
        enum RevokeClient: Sendable { case any, none, clientIDOnly, credentials }
        /// How the revocation request carries the token.
        enum RevokeShape: Sendable {
            /// A form with the token under `parameter`.
            case form(parameter: String, client: RevokeClient)
            /// A JSON `{"token": …}` with the client's credentials as the token endpoint takes them.
            case json
            /// The access token as `Authorization: Bearer`, no body.
            case bearer
        }
        /// What the token answer holds.
        struct Issued: Sendable {
            var accessToken: String
            var refreshToken: String?
            var expiresIn: Int
            /// Whether the answer is to the refresh grant (Strava drops its athlete, Slack its nesting).
            var refreshing: Bool
        }

        var authorizePath = "/authorize"
        var tokenPath = "/token"
        /// The refresh endpoint, when not the token endpoint.
        var refreshPath: String?
        var userPath: String? = "/user"
        var revokePath: String? = "/revoke"
        var clientAuth = ClientAuth.body
        var jsonRequests = false
        var scopeParameter = "scope"
        /// The scope value the authorize request must carry; nil checks nothing.
        var scope: String?
        var authorizeParameters: [String: String] = [:]
        /// Whether the authorize request must carry an S256 challenge (true) or none (false); nil checks nothing.
        var pkce: Bool?
        /// Header fields every call of the broker must carry.
        var headers: [String: String] = [:]
        /// Whether refresh tokens are issued at all.
        var issuesRefreshTokens = true
        var expiresIn: Int? = 3600
        var answer: @Sendable (Issued) -> String = Dialect.standardAnswer
        var userAsk = UserAsk.get(scheme: "Bearer")
        var userAnswer = "{\"id\":4242,\"login\":\"ada\"}"
        var revokeShape = RevokeShape.form(parameter: "token", client: .any)
        var revokesAccessToken = false
        var revokeAnswer: (status: HTTPStatus, body: String?) = (.ok, nil)
        /// The answer to a refused grant, in the provider's error shape.
        var errorAnswer: @Sendable (String) -> (HTTPStatus, String) = { (.badRequest, "{\"error\":\"\($0)\"}") }

        /// The RFC 6749 §5.1 answer.
        static let standardAnswer: @Sendable (Issued) -> String = { issued in
            var body = "{\"access_token\":\"\(issued.accessToken)\",\"token_type\":\"bearer\",\"expires_in\":\(issued.expiresIn)"
            if let refresh = issued.refreshToken { body += ",\"refresh_token\":\"\(refresh)\"" }
            return body + "}"
        }

        /// The fake's own dialect: the one every test spoke before the catalogue.
        static let standard = Dialect()

        /// Why the request lacks a header field the provider demands; nil when it has them all.
        func headerProblem(_ request: Request) -> String? {
            for (name, value) in headers.sorted(by: { $0.key < $1.key }) where request.headers[name] != value {
                return "\(request.path): \(name) is \(request.headers[name] ?? "missing"), not \(value)"
            }
            return nil
        }

        /// Why an authorize request is not the provider's; nil when it is.
        func authorizeProblem(_ request: Request) -> String? {
            if let scope, request.query(scopeParameter) != scope {
                return "authorize: \(scopeParameter) is \(request.query(scopeParameter) ?? "missing"), not \(scope)"
            }
            for (name, value) in authorizeParameters.sorted(by: { $0.key < $1.key }) where request.query(name) != value {
                return "authorize: \(name) is \(request.query(name) ?? "missing"), not \(value)"
            }
            if let pkce, pkce != (request.query("code_challenge") != nil) || (pkce && request.query("code_challenge_method") != "S256") {
                return "authorize: PKCE S256 \(pkce ? "missing" : "sent unasked")"
            }
            return nil
        }

        /// The token request's parameters with the client authenticated as the provider demands, or why not.
        func tokenParameters(_ request: Request, clientSecret: String) -> Result<[String: String], Refusal> {
            let contentType = request.headers["Content-Type"] ?? ""
            let wanted = jsonRequests ? "application/json" : "application/x-www-form-urlencoded"
            guard contentType.hasPrefix(wanted) else { return .failure(Refusal("token: Content-Type \(contentType), not \(wanted)")) }
            guard var parameters = Dialect.parameters(request, json: jsonRequests) else {
                return .failure(Refusal("token: the body is not \(jsonRequests ? "a JSON object of strings" : "a form")"))
            }
            switch clientAuth {
            case .body:
                guard request.headers["Authorization"] == nil else { return .failure(Refusal("token: Authorization sent, credentials belong in the body")) }
            case .basic:
                guard parameters["client_secret"] == nil else { return .failure(Refusal("token: client_secret in the body, Basic wanted")) }
                guard let (id, secret) = Dialect.basic(request) else { return .failure(Refusal("token: no Basic credentials")) }
                parameters["client_id"] = id
                parameters["client_secret"] = secret
            }
            guard parameters["client_id"] == FakeOAuth2Server.clientID, parameters["client_secret"] == clientSecret else {
                return .failure(Refusal("token: wrong client credentials", code: "invalid_client", status: .unauthorized))
            }
            return .success(parameters)
        }

        /// The token the revocation request names, or why the request is not the provider's.
        func revokedToken(_ request: Request, clientSecret: String) -> Result<String, Refusal> {
            switch revokeShape {
            case .bearer:
                guard request.body.isEmpty, let header = request.headers["Authorization"], header.hasPrefix("Bearer ") else {
                    return .failure(Refusal("revoke: a Bearer token and no body wanted"))
                }
                return .success(String(header.dropFirst("Bearer ".count)))
            case .json:
                guard (request.headers["Content-Type"] ?? "").hasPrefix("application/json"),
                      let body = Dialect.parameters(request, json: true), let token = body["token"] else {
                    return .failure(Refusal("revoke: a JSON body with token wanted"))
                }
                if let refusal = revokeClientProblem(request, body: body, client: .credentials, secret: clientSecret) { return .failure(refusal) }
                return .success(token)
            case .form(let parameter, let client):
                guard let body = Dialect.parameters(request, json: false), let token = body[parameter] else {
                    return .failure(Refusal("revoke: a form with \(parameter) wanted"))
                }
                if let refusal = revokeClientProblem(request, body: body, client: client, secret: clientSecret) { return .failure(refusal) }
                return .success(token)
            }
        }

        private func revokeClientProblem(_ request: Request, body: [String: String], client: RevokeClient, secret: String) -> Refusal? {
            let basic = Dialect.basic(request)
            switch client {
            case .any:
                return nil
            case .none:
                return body["client_id"] == nil && basic == nil ? nil : Refusal("revoke: client identification sent unasked")
            case .clientIDOnly:
                return body["client_id"] == FakeOAuth2Server.clientID && body["client_secret"] == nil && basic == nil
                    ? nil : Refusal("revoke: client_id alone wanted")
            case .credentials:
                let given = clientAuth == .basic ? basic : body["client_id"].map { ($0, body["client_secret"] ?? "") }
                return given.map { $0 == (FakeOAuth2Server.clientID, secret) } == true ? nil : Refusal("revoke: client credentials wanted")
            }
        }

        /// Why the user endpoint was not asked the provider's way, else the access token it was asked about.
        func askedToken(_ request: Request, clientSecret: String) -> Result<String, Refusal> {
            switch userAsk {
            case .get(let scheme):
                guard request.method == .GET, let header = request.headers["Authorization"], header.hasPrefix(scheme + " ") else {
                    return .failure(Refusal("user: GET with Authorization: \(scheme) wanted", status: .unauthorized))
                }
                return .success(String(header.dropFirst(scheme.count + 1)))
            case .jsonPost(let containing):
                guard request.method == .POST, let header = request.headers["Authorization"], header.hasPrefix("Bearer "),
                      String(decoding: request.body, as: UTF8.self).contains(containing) else {
                    return .failure(Refusal("user: a POSTed query for \(containing) with a Bearer token wanted"))
                }
                return .success(String(header.dropFirst("Bearer ".count)))
            case .introspection:
                guard request.method == .POST, let body = Dialect.parameters(request, json: false), let token = body["token"],
                      body["client_id"] == FakeOAuth2Server.clientID, body["client_secret"] == clientSecret else {
                    return .failure(Refusal("user: a form with token and the client credentials wanted"))
                }
                return .success(token)
            }
        }

        /// A request body as string parameters: a form, or a JSON object whose members are all strings.
        static func parameters(_ request: Request, json: Bool) -> [String: String]? {
            guard json else {
                return Dictionary(URLEncodedForm.parse(String(decoding: request.body, as: UTF8.self)).map { ($0.name, $0.value) },
                                  uniquingKeysWith: { a, _ in a })
            }
            guard let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any] else { return nil }
            let strings = object.compactMapValues { $0 as? String }
            return strings.count == object.count ? strings : nil
        }

        /// The id and secret of an `Authorization: Basic` header, form-decoded (RFC 6749 §2.3.1).
        static func basic(_ request: Request) -> (String, String)? {
            guard let header = request.headers["Authorization"], header.hasPrefix("Basic "),
                  let decoded = Base64.decode(String(header.dropFirst("Basic ".count))),
                  let text = String(bytes: decoded, encoding: .utf8), let colon = text.firstIndex(of: ":") else { return nil }
            let id = String(text[..<colon]).removingPercentEncoding ?? ""
            let secret = String(text[text.index(after: colon)...]).removingPercentEncoding ?? ""
            return (id, secret)
        }
    }

    /// Why the fake refused a request: recorded as a violation and answered in the dialect's error shape.
    struct Refusal: Error, Sendable {
        let reason: String
        let code: String
        let status: HTTPStatus
        init(_ reason: String, code: String = "invalid_request", status: HTTPStatus = .badRequest) {
            self.reason = reason
            self.code = code
            self.status = status
        }
    }
}
