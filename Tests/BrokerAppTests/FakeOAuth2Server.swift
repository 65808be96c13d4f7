import BrokerHTTP
import Foundation
import Synchronization

/// An in-process OAuth 2.0 provider on a real socket, with refresh tokens (RFC 6749 §6) as GitHub Apps issue them:
/// each refresh token works once and the refresh answer carries its successor (rotation can be switched off, as Google).
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
    }

    static let clientID = "acme-client-id"
    let clientSecret: String
    let server: HTTPServer
    let box: StateBox

    /// Holds the fake's counters and modes; route closures share it.
    final class StateBox: Sendable {
        let state = Mutex(State())
    }

    /// Starts on 127.0.0.1:0; `clientSecret` is what the broker must present.
    init(clientSecret: String) throws {
        self.clientSecret = clientSecret
        let box = StateBox()
        self.box = box
        var router = Router()
        router.add(.GET, "/authorize", .sync({ request in
            guard request.query("client_id") == FakeOAuth2Server.clientID, let redirect = request.query("redirect_uri"),
                  let state = request.query("state") else {
                return Response.json(.badRequest, "{\"error\":\"invalid_request\"}")
            }
            let code = box.state.withLock { s -> String in
                s.issued += 1
                let code = "ACME-CODE-SENTINEL-\(s.issued)"
                s.codes[code] = redirect
                return code
            }
            return Response(status: .found, headers: HTTPHeaders([("Location", "\(redirect)?code=\(code)&state=\(state)")]))
        }))
        let secret = clientSecret
        router.add(.POST, "/token", .async({ request in
            let form = Dictionary(URLEncodedForm.parse(String(decoding: request.body, as: UTF8.self)).map { ($0.name, $0.value) },
                                  uniquingKeysWith: { a, _ in a })
            guard form["client_id"] == FakeOAuth2Server.clientID, form["client_secret"] == secret else {
                return FakeOAuth2Server.error(.unauthorized, "invalid_client")
            }
            switch form["grant_type"] {
            case "authorization_code": return FakeOAuth2Server.exchange(form, box)
            case "refresh_token": return await FakeOAuth2Server.refresh(form, box)
            default: return FakeOAuth2Server.error(.badRequest, "unsupported_grant_type")
            }
        }))
        router.add(.GET, "/user", .sync({ request in
            guard request.headers["Authorization"]?.hasPrefix("Bearer ACME-ACCESS-SENTINEL-") == true else {
                return Response.json(.unauthorized, "{\"message\":\"Bad credentials\"}")
            }
            return Response.json(.ok, box.state.withLock { $0.userBody })
        }))
        router.add(.POST, "/revoke", .sync({ request in
            let form = URLEncodedForm.parse(String(decoding: request.body, as: UTF8.self))
            let token = form.first { $0.name == "token" }?.value ?? ""
            box.state.withLock { $0.revoked.append(token) }
            return Response(status: .ok)
        }))
        server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0), router: router)
        try server.start()
    }

    /// The authorization-code grant: a fresh access token and, unless switched off, a refresh token.
    private static func exchange(_ form: [String: String], _ box: StateBox) -> Response {
        let body = box.state.withLock { s -> String? in
            guard let code = form["code"], let redirect = s.codes.removeValue(forKey: code), form["redirect_uri"] == redirect else {
                return nil
            }
            s.exchanges += 1
            if let fixed = s.exchangeBody {
                s.issued += 1
                return fixed.replacingOccurrences(of: "{{n}}", with: String(s.issued))
            }
            return grantBody(&s, expiresIn: s.exchangeExpiresIn, withRefreshToken: s.issueRefreshTokens)
        }
        guard let body else { return error(.badRequest, "invalid_grant") }
        return json(body)
    }

    /// The refresh grant: counted, optionally slow or failing; an unknown or used refresh token is `invalid_grant`.
    private static func refresh(_ form: [String: String], _ box: StateBox) async -> Response {
        let (mode, delay) = box.state.withLock { s in
            s.refreshCalls += 1
            return (s.refreshMode, s.refreshDelay)
        }
        if delay > 0 { try? await Task.sleep(nanoseconds: UInt64(delay * 1e9)) }
        switch mode {
        case .ok: break
        case .http500: return Response(status: .internalServerError, body: Array("upstream trouble".utf8))
        case .invalidGrant: return error(.badRequest, "invalid_grant")
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
            return grantBody(&s, expiresIn: s.refreshExpiresIn, withRefreshToken: s.rotate)
        }
        guard let body else { return error(.badRequest, "invalid_grant") }
        return json(body)
    }

    private static func grantBody(_ s: inout State, expiresIn: Int, withRefreshToken: Bool) -> String {
        s.issued += 1
        let access = "ACME-ACCESS-SENTINEL-\(s.issued)"
        s.accessTokens.append(access)
        var body = "{\"access_token\":\"\(access)\",\"token_type\":\"bearer\",\"expires_in\":\(expiresIn)"
        if withRefreshToken {
            let refresh = "ACME-REFRESH-SENTINEL-\(s.issued)"
            s.validRefreshTokens.insert(refresh)
            s.currentRefreshToken = refresh
            body += ",\"refresh_token\":\"\(refresh)\""
        }
        return body + "}"
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
