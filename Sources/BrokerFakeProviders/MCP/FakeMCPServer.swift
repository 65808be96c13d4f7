import BrokerCrypto
import BrokerHTTP
import Foundation
import Synchronization

/// A remote MCP server and its authorization server on one real socket, speaking the MCP authorization wire.
///
/// The server is `<base>/mcp`: a POST without a valid token gets `401` with
/// `WWW-Authenticate: Bearer resource_metadata="…"` (RFC 9728 §5.1, unless ``Options/challenge`` is off); its
/// protected resource metadata is at the path-inserted well-known URL (§3.1). The authorization server's issuer is
/// `<base>/as`, its metadata at `/.well-known/oauth-authorization-server/as` (RFC 8414 §3.1), with dynamic
/// registration at `/as/register` (RFC 7591, counted), `/as/authorize` approving at once, and `/as/token` for the code
/// and refresh grants. The authorization server checks what a real one does: a registered client and redirect URI,
/// PKCE S256 (RFC 7636 §4.6), and `resource` equal to the server on both requests (RFC 8707 §2, else
/// `invalid_target`). An authorized POST to the server answers `text/event-stream`, sending each event the test
/// pushes on ``events`` as it comes, so a test orders the stream by its own signals.
public final class FakeMCPServer: Sendable {
    /// What the fake offers.
    public struct Options: Sendable {
        /// Whether the `401` names the protected resource metadata; off makes the broker use the well-known URL.
        public var challenge = true
        /// Whether the authorization server's metadata offers `registration_endpoint`.
        public var registration = true
        /// `client_id_metadata_document_supported`.
        public var clientMetadataDocuments = false
        /// Whether the protected resource metadata names another resource (a misconfigured or hostile server).
        public var wrongResource = false
        /// Whether the authorization server's metadata leaves out `code_challenge_methods_supported` (no PKCE S256).
        public var withoutS256 = false
        /// Whether the authorization server's metadata names another issuer than the one it was looked up for.
        public var issuerMismatch = false
        /// Whether registrations wait for ``releaseRegistrations()`` before they are answered, so that a test can have
        /// several brokers discover the server while the first registration is under way.
        public var holdRegistrations = false
        /// Creates the defaults: challenge, registration, no client ID metadata documents.
        public init() {}
    }

    /// What the fake saw.
    public struct Ledger: Sendable {
        /// Dynamic registrations accepted.
        public var registrations = 0
        /// Every authorize request's query, oldest first.
        public var authorizeQueries: [[String: String]] = []
        /// Every token request's form, oldest first (no secrets beyond the fake's own).
        public var tokenForms: [[String: String]] = []
        /// Authorized calls to the server.
        public var serverCalls = 0
        /// Fetches of the authorization server's metadata.
        public var metadataFetches = 0
        /// Registration requests received, answered or still held.
        public var registrationRequests = 0
    }

    /// One registered client.
    struct Client {
        var redirectURIs: [String]
    }

    /// One issued code.
    struct Code {
        var clientID: String
        var redirectURI: String
        var challenge: String
        var resource: String
        var scope: String?
    }

    /// The mutable state.
    struct State {
        var options: Options
        var ledger = Ledger()
        var clients: [String: Client] = [:]
        var codes: [String: Code] = [:]
        var accessTokens: [String: String] = [:]
        var refreshTokens: [String: (clientID: String, resource: String)] = [:]
        var heldRegistrations: [CheckedContinuation<Void, Never>] = []
        var registrationsReleased = false
    }

    /// The state, shared with the route closures.
    final class Core: Sendable {
        let value: Mutex<State>
        init(_ state: State) { value = Mutex(state) }
        func withLock<R>(_ body: (inout State) -> R) -> R { value.withLock { body(&$0) } }
    }

    let state: Core
    /// The socket side.
    public let listener: FakeProviderServer
    /// The events the server's SSE answers send, as the test pushes them (nil ends the stream).
    public let events = FakeAPIEvents()
    /// The routes.
    public let router: Router

    /// Makes the fake with `options`; nothing listens until ``start()``.
    public init(options: Options = Options()) {
        let state = Core(State(options: options))
        self.state = state
        let events = self.events
        let base = BaseBox()
        var router = Router()
        router.add(.POST, "/mcp", .sync({ Self.server($0, state: state, base: base, events: events) }))
        router.get("/.well-known/oauth-protected-resource/mcp") { _ in Self.protectedResource(state: state, base: base) }
        router.get("/.well-known/oauth-authorization-server/as") { _ in Self.authorizationServer(state: state, base: base) }
        router.add(
            .POST, "/as/register",
            .async({ request in
                await Self.hold(state: state)
                return Self.register(request, state: state)
            }))
        router.get("/as/authorize") { Self.authorize($0, state: state, base: base) }
        router.add(.POST, "/as/token", .sync({ Self.token($0, state: state, base: base) }))
        self.router = router
        listener = FakeProviderServer(router: router)
        self.base = base
    }

    /// Holds the base URL once the port is known.
    final class BaseBox: Sendable {
        let value = Mutex("")
    }
    let base: BaseBox

    /// Starts listening on 127.0.0.1 with a port the kernel picks.
    public func start() throws {
        try listener.start()
        base.value.withLock { $0 = listener.baseURL }
    }

    /// Stops listening.
    public func stop() async {
        events.push(nil)
        releaseRegistrations()
        await listener.stop()
    }

    /// The server URL, `<base>/mcp`.
    public var serverURL: String { listener.baseURL + "/mcp" }
    /// The authorization server's issuer, `<base>/as`.
    public var issuer: String { listener.baseURL + "/as" }
    /// What the fake saw so far.
    public var ledger: Ledger { state.withLock { $0.ledger } }

    /// Answers every held registration and lets later ones through at once.
    public func releaseRegistrations() {
        let held = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.registrationsReleased = true
            defer { s.heldRegistrations = [] }
            return s.heldRegistrations
        }
        for waiter in held { waiter.resume() }
    }

    /// Waits, with ``Options/holdRegistrations``, until ``releaseRegistrations()``.
    static func hold(state: Core) async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let wait = state.withLock { s -> Bool in
                s.ledger.registrationRequests += 1
                guard s.options.holdRegistrations, !s.registrationsReleased else { return false }
                s.heldRegistrations.append(waiter)
                return true
            }
            if !wait { waiter.resume() }
        }
    }

    /// Changes the options; takes effect from the next request.
    public func set(_ change: (inout Options) -> Void) {
        state.withLock { change(&$0.options) }
    }

    static func server(_ request: Request, state: Core, base: BaseBox, events: FakeAPIEvents) -> Response {
        let server = base.value.withLock { $0 } + "/mcp"
        let authorized = state.withLock { s -> Bool in
            guard let token = FakeWire.bearerToken(request), s.accessTokens[token] == server else { return false }
            s.ledger.serverCalls += 1
            return true
        }
        guard authorized else {
            let challenge = state.withLock { $0.options.challenge }
            var extra: [(String, String)] = []
            if challenge {
                let metadata = base.value.withLock { $0 } + "/.well-known/oauth-protected-resource/mcp"
                extra.append(("WWW-Authenticate", "Bearer resource_metadata=\"\(metadata)\", scope=\"tools:read\""))
            } else {
                extra.append(("WWW-Authenticate", "Bearer"))
            }
            return FakeWire.answer(.unauthorized, "application/json", #"{"error":"invalid_token"}"#, extra: extra)
        }
        return events.response()
    }

    static func protectedResource(state: Core, base: BaseBox) -> Response {
        let url = base.value.withLock { $0 }
        let wrong = state.withLock { $0.options.wrongResource }
        let resource = wrong ? url + "/other" : url + "/mcp"
        let body: [String: Any] = [
            "resource": resource, "authorization_servers": [url + "/as"], "scopes_supported": ["tools:read", "tools:write"],
            "bearer_methods_supported": ["header"],
        ]
        return json(.ok, body)
    }

    static func authorizationServer(state: Core, base: BaseBox) -> Response {
        let issuer = base.value.withLock { $0 } + "/as"
        let options = state.withLock { s -> Options in
            s.ledger.metadataFetches += 1
            return s.options
        }
        var body: [String: Any] = [
            "issuer": options.issuerMismatch ? issuer + "/other" : issuer, "authorization_endpoint": issuer + "/authorize",
            "token_endpoint": issuer + "/token",
            "code_challenge_methods_supported": ["S256"], "grant_types_supported": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_methods_supported": ["none"], "response_types_supported": ["code"],
            "client_id_metadata_document_supported": options.clientMetadataDocuments,
        ]
        if options.registration { body["registration_endpoint"] = issuer + "/register" }
        if options.withoutS256 { body["code_challenge_methods_supported"] = nil }
        return json(.ok, body)
    }

    static func register(_ request: Request, state: Core) -> Response {
        guard let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
            let uris = object["redirect_uris"] as? [String], !uris.isEmpty
        else {
            return json(.badRequest, ["error": "invalid_redirect_uri", "error_description": "redirect_uris is required"])
        }
        let id = "mcp-client-" + FakeWire.randomHex(8)
        state.withLock {
            $0.ledger.registrations += 1
            $0.clients[id] = Client(redirectURIs: uris)
        }
        return json(
            .created,
            [
                "client_id": id, "client_id_issued_at": Int(Date().timeIntervalSince1970), "redirect_uris": uris,
                "token_endpoint_auth_method": "none", "grant_types": ["authorization_code", "refresh_token"],
            ])
    }

    static func authorize(_ request: Request, state: Core, base: BaseBox) -> Response {
        let query = FakeWire.query(request)
        let server = base.value.withLock { $0 } + "/mcp"
        return state.withLock { s -> Response in
            s.ledger.authorizeQueries.append(query)
            guard let clientID = query["client_id"], let client = s.clients[clientID], let redirect = query["redirect_uri"],
                client.redirectURIs.contains(redirect)
            else {
                return FakeWire.answer(.badRequest, "text/plain", "unknown client or redirect_uri")
            }
            var answer: [(String, String)] = []
            if query["response_type"] != "code" {
                answer = [("error", "unsupported_response_type")]
            } else if query["code_challenge_method"] != "S256" || (query["code_challenge"] ?? "").isEmpty {
                answer = [("error", "invalid_request")]
            } else if query["resource"] != server {
                answer = [("error", "invalid_target")]
            } else {
                let code = FakeWire.randomHex(16)
                s.codes[code] = Code(
                    clientID: clientID, redirectURI: redirect, challenge: query["code_challenge"] ?? "", resource: server,
                    scope: query["scope"])
                answer = [("code", code)]
            }
            if let given = query["state"] { answer.append(("state", given)) }
            return FakeWire.redirect(FakeWire.appendingQuery(redirect, answer))
        }
    }

    static func token(_ request: Request, state: Core, base: BaseBox) -> Response {
        let form = FakeWire.form(request)
        let server = base.value.withLock { $0 } + "/mcp"
        return state.withLock { s -> Response in
            var logged = form
            for secret in ["code", "code_verifier", "refresh_token"] where logged[secret] != nil { logged[secret] = "…" }
            s.ledger.tokenForms.append(logged)
            guard let clientID = form["client_id"], s.clients[clientID] != nil else {
                return json(.unauthorized, ["error": "invalid_client"])
            }
            guard form["resource"] == server else { return json(.badRequest, ["error": "invalid_target"]) }
            switch form["grant_type"] {
            case "authorization_code":
                guard let text = form["code"], let code = s.codes.removeValue(forKey: text), code.clientID == clientID,
                    code.redirectURI == form["redirect_uri"], code.resource == server,
                    let verifier = form["code_verifier"],
                    Base64URL.encode(SHA256.hash(Array(verifier.utf8))) == code.challenge
                else { return json(.badRequest, ["error": "invalid_grant"]) }
                return issue(&s, clientID: clientID, server: server, scope: code.scope)
            case "refresh_token":
                guard let text = form["refresh_token"], let held = s.refreshTokens[text], held.clientID == clientID,
                    held.resource == server
                else { return json(.badRequest, ["error": "invalid_grant"]) }
                return issue(&s, clientID: clientID, server: server, scope: nil, keeping: text)
            default:
                return json(.badRequest, ["error": "unsupported_grant_type"])
            }
        }
    }

    /// New tokens for `clientID` at `server`; a refresh keeps its refresh token.
    static func issue(_ s: inout State, clientID: String, server: String, scope: String?, keeping refresh: String? = nil) -> Response {
        let access = "mcp-at-" + FakeWire.randomHex(12)
        let refreshToken = refresh ?? "mcp-rt-" + FakeWire.randomHex(12)
        s.accessTokens[access] = server
        s.refreshTokens[refreshToken] = (clientID, server)
        var body: [String: Any] = ["access_token": access, "token_type": "Bearer", "expires_in": 3600, "refresh_token": refreshToken]
        if let scope { body["scope"] = scope }
        return json(.ok, body, extra: [("Cache-Control", "no-store")])
    }

    /// A JSON answer.
    static func json(_ status: HTTPStatus, _ object: [String: Any], extra: [(String, String)] = []) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return FakeWire.answer(status, "application/json", String(decoding: data, as: UTF8.self), extra: extra)
    }
}
