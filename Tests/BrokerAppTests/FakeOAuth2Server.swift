import BrokerCore
import BrokerHTTP
import Foundation
import Synchronization

/// An in-process OAuth 2.0 provider on a real socket, with refresh tokens (RFC 6749 §6) as GitHub Apps issue them:
/// each refresh token works once and the refresh answer carries its successor (rotation can be switched off, as Google).
/// A ``Dialect`` makes it speak one real provider's wire format instead (the catalogue's end-to-end tests).
final class FakeOAuth2Server: Sendable {
    /// How the token endpoint answers the refresh grant.
    enum RefreshMode: Sendable { case ok, http500, invalidGrant, rateLimited(retryAfter: String) }

    struct State {
        var exchanges = 0
        var refreshCalls = 0
        var codes: [String: String] = [:]     // code → redirect_uri
        var refreshMode: RefreshMode = .ok
        var refreshDelay: Double = 0
        var exchangeExpiresIn = 3600
        var refreshExpiresIn = 3600
        var issueRefreshTokens = true
        var rotate = true
        var validRefreshTokens: Set<String> = []
        var currentRefreshToken: String?
        var stalePresentations = 0
        var accessTokens: [String] = []
        var revoked: [String] = []
        var issued = 0
        /// When set, the code exchange answers with this JSON (a hostile or odd provider), after checking the code.
        var exchangeBody: String?
        /// What the user endpoint answers for a valid token.
        var userBody = "{\"id\":4242,\"login\":\"ada\"}"
        /// The PKCE challenge each code was issued with.
        var challenges: [String: String] = [:]
        /// Every demand of the dialect the broker missed, in order.
        var violations: [String] = []
    }

    static let clientID = "acme-client-id"
    let clientSecret: String
    let dialect: Dialect
    let server: HTTPServer
    let box: StateBox

    /// Holds the fake's counters and modes; route closures share it.
    final class StateBox: Sendable {
        let state = Mutex(State())

        /// Records `refusal` as a violation and answers it in the dialect's error shape.
        func refuse(_ refusal: Refusal, _ dialect: Dialect) -> Response {
            state.withLock { $0.violations.append(refusal.reason) }
            return Response(status: refusal.status, headers: HTTPHeaders([("Content-Type", "application/json")]),
                            body: Array(dialect.errorAnswer(refusal.code).1.utf8))
        }
    }

    /// Starts on 127.0.0.1:0; `clientSecret` is what the broker must present, `dialect` how it must present it.
    init(clientSecret: String, dialect: Dialect = .standard) throws {
        self.clientSecret = clientSecret
        self.dialect = dialect
        let box = StateBox()
        box.state.withLock {
            $0.userBody = dialect.userAnswer
            $0.exchangeExpiresIn = dialect.expiresIn ?? 3600
            $0.refreshExpiresIn = dialect.expiresIn ?? 3600
            $0.issueRefreshTokens = dialect.issuesRefreshTokens
        }
        self.box = box
        var router = Router()
        router.add(.GET, dialect.authorizePath, .sync({ request in
            guard request.query("client_id") == FakeOAuth2Server.clientID, let redirect = request.query("redirect_uri"),
                  let state = request.query("state") else {
                return Response.json(.badRequest, "{\"error\":\"invalid_request\"}")
            }
            if let problem = dialect.authorizeProblem(request) { return box.refuse(Refusal(problem), dialect) }
            let code = box.state.withLock { s -> String in
                s.issued += 1
                let code = "ACME-CODE-SENTINEL-\(s.issued)"
                s.codes[code] = redirect
                s.challenges[code] = request.query("code_challenge")
                return code
            }
            return Response(status: .found, headers: HTTPHeaders([("Location", "\(redirect)?code=\(code)&state=\(state)")]))
        }))
        let secret = clientSecret
        let grant: Router.Handler = .async({ request in
            if let problem = dialect.headerProblem(request) { return box.refuse(Refusal(problem), dialect) }
            let form: [String: String]
            switch dialect.tokenParameters(request, clientSecret: secret) {
            case .success(let parameters): form = parameters
            case .failure(let refusal): return box.refuse(refusal, dialect)
            }
            switch form["grant_type"] {
            case "authorization_code" where request.path == dialect.tokenPath: return FakeOAuth2Server.exchange(form, box, dialect)
            case "refresh_token": return await FakeOAuth2Server.refresh(form, box, dialect)
            default: return FakeOAuth2Server.error(.badRequest, "unsupported_grant_type")
            }
        })
        router.add(.POST, dialect.tokenPath, grant)
        if let refreshPath = dialect.refreshPath { router.add(.POST, refreshPath, grant) }
        if let userPath = dialect.userPath {
            let user: Router.Handler = .sync({ request in
                if let problem = dialect.headerProblem(request) { return box.refuse(Refusal(problem), dialect) }
                switch dialect.askedToken(request, clientSecret: secret) {
                case .failure(let refusal): return box.refuse(refusal, dialect)
                case .success(let token) where token.hasPrefix("ACME-ACCESS-SENTINEL-"): return Response.json(.ok, box.state.withLock { $0.userBody })
                case .success: return Response.json(.unauthorized, "{\"message\":\"Bad credentials\"}")
                }
            })
            router.add(.GET, userPath, user)
            router.add(.POST, userPath, user)
        }
        if let revokePath = dialect.revokePath {
            router.add(.POST, revokePath, .sync({ request in
                if let problem = dialect.headerProblem(request) { return box.refuse(Refusal(problem), dialect) }
                switch dialect.revokedToken(request, clientSecret: secret) {
                case .failure(let refusal): return box.refuse(refusal, dialect)
                case .success(let token): box.state.withLock { $0.revoked.append(token) }
                }
                let answer = dialect.revokeAnswer
                return Response(status: answer.status, headers: HTTPHeaders(answer.body == nil ? [] : [("Content-Type", "application/json")]),
                                body: Array((answer.body ?? "").utf8))
            }))
        }
        server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0), router: router)
        try server.start()
    }

    /// The authorization-code grant: a fresh access token and, unless switched off, a refresh token.
    private static func exchange(_ form: [String: String], _ box: StateBox, _ dialect: Dialect) -> Response {
        let body = box.state.withLock { s -> String? in
            guard let code = form["code"], let redirect = s.codes.removeValue(forKey: code), form["redirect_uri"] == redirect else {
                return nil
            }
            // RFC 7636 §4.6: the verifier must hash to the challenge the code was issued with.
            let challenge = s.challenges.removeValue(forKey: code)
            guard challenge == form["code_verifier"].map(PKCE.challenge(for:)) else {
                s.violations.append("token: code_verifier does not match the code_challenge")
                return nil
            }
            s.exchanges += 1
            if let fixed = s.exchangeBody {
                s.issued += 1
                return fixed.replacingOccurrences(of: "{{n}}", with: String(s.issued))
            }
            return grantBody(&s, dialect, expiresIn: s.exchangeExpiresIn, withRefreshToken: s.issueRefreshTokens, refreshing: false)
        }
        guard let body else { return dialectError(dialect, "invalid_grant") }
        return json(body)
    }

    /// The refresh grant: counted, optionally slow or failing; an unknown or used refresh token is `invalid_grant`.
    private static func refresh(_ form: [String: String], _ box: StateBox, _ dialect: Dialect) async -> Response {
        let (mode, delay) = box.state.withLock { s in
            s.refreshCalls += 1
            return (s.refreshMode, s.refreshDelay)
        }
        if delay > 0 { try? await Task.sleep(nanoseconds: UInt64(delay * 1e9)) }
        switch mode {
        case .ok: break
        case .http500: return Response(status: .internalServerError, body: Array("upstream trouble".utf8))
        case .invalidGrant: return dialectError(dialect, "invalid_grant")
        case .rateLimited(let retryAfter):
            var headers = HTTPHeaders()
            headers.add(name: "Retry-After", value: retryAfter)
            return Response(status: HTTPStatus(429, "Too Many Requests"), headers: headers, body: Array("slow down".utf8))
        }
        let body = box.state.withLock { s -> String? in
            guard let presented = form["refresh_token"], s.validRefreshTokens.contains(presented) else {
                s.stalePresentations += 1
                return nil
            }
            if s.rotate { s.validRefreshTokens.remove(presented) }
            return grantBody(&s, dialect, expiresIn: s.refreshExpiresIn, withRefreshToken: s.rotate, refreshing: true)
        }
        guard let body else { return dialectError(dialect, "invalid_grant") }
        return json(body)
    }

    private static func grantBody(_ s: inout State, _ dialect: Dialect, expiresIn: Int, withRefreshToken: Bool, refreshing: Bool) -> String {
        s.issued += 1
        let access = "ACME-ACCESS-SENTINEL-\(s.issued)"
        s.accessTokens.append(access)
        var refresh: String?
        if withRefreshToken {
            refresh = "ACME-REFRESH-SENTINEL-\(s.issued)"
            s.validRefreshTokens.insert(refresh!)
            s.currentRefreshToken = refresh
        }
        return dialect.answer(Dialect.Issued(accessToken: access, refreshToken: refresh, expiresIn: expiresIn, refreshing: refreshing))
    }

    /// A refused grant in the dialect's error shape (RFC 6749 §5.2 for the standard one).
    private static func dialectError(_ dialect: Dialect, _ code: String) -> Response {
        let (status, body) = dialect.errorAnswer(code)
        return Response(status: status, headers: HTTPHeaders([("Content-Type", "application/json")]), body: Array(body.utf8))
    }

    private static func json(_ body: String) -> Response {
        Response(status: .ok, headers: HTTPHeaders([("Content-Type", "application/json"), ("Cache-Control", "no-store")]),
                 body: Array(body.utf8))
    }

    /// An RFC 6749 §5.2 error body.
    private static func error(_ status: HTTPStatus, _ code: String) -> Response {
        Response(status: status, headers: HTTPHeaders([("Content-Type", "application/json")]), body: Array("{\"error\":\"\(code)\"}".utf8))
    }

    var base: String { "http://127.0.0.1:\(server.port)" }
    var refreshCalls: Int { box.state.withLock { $0.refreshCalls } }
    var stalePresentations: Int { box.state.withLock { $0.stalePresentations } }
    var accessTokens: [String] { box.state.withLock { $0.accessTokens } }
    var currentRefreshToken: String? { box.state.withLock { $0.currentRefreshToken } }
    var revoked: [String] { box.state.withLock { $0.revoked } }
    var violations: [String] { box.state.withLock { $0.violations } }
    func set(_ change: @Sendable (inout State) -> Void) { box.state.withLock { change(&$0) } }

    /// The providers-file entry of a custom OAuth 2.0 provider `acme` pointing at this fake.
    var providerEntry: String {
        """
        "acme": {"kind": "oauth2", "client_id": "\(FakeOAuth2Server.clientID)", "client_secret": "${FAKE_ACME_SECRET}",
                 "authorize_url": "\(base)/authorize", "token_url": "\(base)/token", "user_url": "\(base)/user",
                 "revoke_url": "\(base)/revoke"}
        """
    }
}
