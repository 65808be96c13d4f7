import BrokerCrypto
import BrokerHTTP
import Foundation
import Synchronization

/// An API that takes entered credentials instead of OAuth tokens, in process or on a real socket: each path prefix
/// checks one placement and answers `401` without it.
///
/// - `/key-header/…`: `Authorization: Token <key>` (the Django REST framework style many APIs use);
/// - `/key-query/…`: `?api_key=<key>` in the query;
/// - `/basic/…`: `Authorization: Basic base64(user:password)` (RFC 7617);
/// - `/bearer/…`: `Authorization: Bearer <token>` (RFC 6750 §2.1);
/// - `/algolia/…`: Algolia's two headers, `X-Algolia-API-Key: <key>` and `X-Algolia-Application-Id`, which must name
///   the application whose host was called (the first label of `Host`, as `APPID-dsn.algolia.net` does).
///
/// An accepted call gets `200 {"ok":true,"user":{"id":…},"method","path"}`, a refused one
/// `401 {"error":"unauthorized"}` with `WWW-Authenticate`. The fake records what each call carried, and
/// `GET /_fake/calls` lists the host, path and verdict of each (never a credential), for tests in another process.
public final class FakeCredentialProvider: Sendable {
    /// What one call carried.
    public struct Call: Sendable, Equatable {
        /// The path, without the query.
        public var path: String
        /// The query as received, or nil.
        public var query: String?
        /// The `Authorization` field, or nil.
        public var authorization: String?
        /// Whether the fake accepted the credential.
        public var accepted: Bool
        /// The `Host` field (RFC 9110 §7.2): which per-account host the broker called (`acme.localhost:PORT`).
        public var host: String? = nil
        /// The `X-Algolia-Application-Id` field, or nil.
        public var applicationID: String? = nil
    }

    /// What tests may change, and what the fake saw.
    public struct State: Sendable {
        /// The API key the key paths accept, the token `/bearer/` accepts, and the basic pair.
        public var apiKey: String
        public var token: String
        public var username: String
        public var password: String
        /// Every call, in order.
        public var calls: [Call] = []
    }

    /// The user every accepted call names.
    public static let userID = "u-4242"
    /// Its routes, to call in process or to serve.
    public let router: Router
    /// The socket side.
    public let listener: FakeProviderServer
    let box: Box

    /// Holds the state the routes share.
    final class Box: Sendable {
        let state: Mutex<State>
        init(_ state: State) { self.state = Mutex(state) }
    }

    /// Makes a fake that accepts these credentials, listening on `host`:`port` once started.
    public init(apiKey: String, token: String, username: String, password: String, host: String = "127.0.0.1", port: Int = 0) {
        let box = Box(State(apiKey: apiKey, token: token, username: username, password: password))
        self.box = box
        var router = Router()
        for method in [HTTPMethod.GET, .POST, .HEAD] {
            for prefix in ["/key-header/", "/key-query/", "/basic/", "/bearer/", "/algolia/"] {
                router.add(method, prefix: prefix, .sync({ request in Self.answer(request, prefix: prefix, box: box) }))
            }
        }
        router.add(.GET, "/_fake/calls", .sync({ _ in Self.callList(box: box) }))
        self.router = router
        listener = FakeProviderServer(router: router, host: host, port: port)
    }

    /// The state now.
    public var state: State { box.state.withLock { $0 } }

    /// Changes the state.
    public func update(_ change: (inout State) -> Void) { box.state.withLock { change(&$0) } }

    /// Binds and starts answering.
    public func start() throws { try listener.start() }

    /// Stops.
    public func stop() async { await listener.stop() }

    /// The bound port.
    public var port: Int { listener.port }

    /// `http://127.0.0.1:PORT`.
    public var baseURL: String { listener.baseURL }

    /// A providers file with one provider per placement, all on this fake and verified at `/me`: `keyhdr`
    /// (`Token {api_key}`, uid from the answer's `user.id`), `keyqry` (`?api_key=`), `basicp` and `bearerp`.
    public var providersFile: String {
        let base = baseURL
        return """
            {"providers": {
              "keyhdr": {"auth": "api_key", "api_base_url": "\(base)/key-header", "api_allow_private": true,
                         "credential_format": "Token {api_key}", "verify": {"path": "/me", "user_id_field": "user.id"}},
              "keyqry": {"auth": "api_key", "api_base_url": "\(base)/key-query", "api_allow_private": true,
                         "credential_query_param": "api_key", "verify": {"path": "/me"}},
              "basicp": {"auth": "basic", "api_base_url": "\(base)/basic", "api_allow_private": true, "verify": {"path": "/me"}},
              "bearerp": {"auth": "bearer", "api_base_url": "\(base)/bearer", "api_allow_private": true, "verify": {"path": "/me"}}
            }}
            """
    }

    /// A providers file with `subdom`, a `bearer` provider whose API base is `http://{subdomain}.localhost:PORT/bearer`:
    /// each account names its subdomain, and `*.localhost` is the loopback address (RFC 6761 §6.3), so every
    /// subdomain reaches this fake, which records the `Host` it was called by. `pattern` refuses names starting with `x`.
    /// Beside it `algol`, an Algolia-like `api_key` provider at `http://{application_id}.localhost:PORT/algolia` whose
    /// calls carry the key and the same setting in two headers.
    public var settingsProvidersFile: String {
        """
        {"providers": {
          "subdom": {"auth": "bearer", "api_base_url": "http://{subdomain}.localhost:\(port)/bearer", "api_allow_private": true,
                     "settings": [{"name": "subdomain", "description": "Your team's subdomain", "pattern": "[a-wyz0-9][a-z0-9-]*"}],
                     "verify": {"path": "/me"}},
          "algol": {"auth": "api_key", "api_base_url": "http://{application_id}.localhost:\(port)/algolia", "api_allow_private": true,
                    "settings": [{"name": "application_id", "description": "Application ID", "pattern": "[A-Za-z0-9]+"}],
                    "credential_header": "X-Algolia-API-Key", "credential_format": "{api_key}",
                    "credential_extra_headers": {"X-Algolia-Application-Id": "{application_id}"},
                    "verify": {"path": "/1/indexes"}}
        }}
        """
    }

    /// ``providersFile`` and ``settingsProvidersFile`` in one file: every provider `fake-provider --kind credentials`
    /// offers.
    public var allProvidersFile: String {
        func providers(_ text: String) -> [String: Any] {
            let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
            return object?["providers"] as? [String: Any] ?? [:]
        }
        let merged = providers(providersFile).merging(providers(settingsProvidersFile)) { first, _ in first }
        let data = (try? JSONSerialization.data(withJSONObject: ["providers": merged], options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// `{"calls": [{"host", "path", "accepted"}]}`: what reached the fake, in order; no credential and no query.
    private static func callList(box: Box) -> Response {
        let calls = box.state.withLock { $0.calls }.map { call -> [String: Any] in
            ["host": call.host ?? "", "path": call.path, "accepted": call.accepted]
        }
        let data = (try? JSONSerialization.data(withJSONObject: ["calls": calls], options: [.sortedKeys])) ?? Data()
        return FakeWire.answer(.ok, "application/json", String(decoding: data, as: UTF8.self))
    }

    private static func answer(_ request: Request, prefix: String, box: Box) -> Response {
        let authorization = request.headers["Authorization"]
        let query = FakeWire.query(request)
        let accepted = box.state.withLock { s -> Bool in
            let ok: Bool
            switch prefix {
            case "/key-header/": ok = authorization == "Token " + s.apiKey
            case "/key-query/": ok = query["api_key"] == s.apiKey
            case "/bearer/": ok = authorization == "Bearer " + s.token
            case "/algolia/":
                let label = (request.headers["Host"] ?? "").prefix { $0 != "." && $0 != ":" }.lowercased()
                ok = request.headers["X-Algolia-API-Key"] == s.apiKey && request.headers["X-Algolia-Application-Id"]?.lowercased() == label
            default: ok = basicPair(authorization).map { $0 == s.username && $1 == s.password } ?? false
            }
            s.calls.append(
                Call(
                    path: request.path, query: request.head.query, authorization: authorization, accepted: ok,
                    host: request.headers["Host"],
                    applicationID: request.headers["X-Algolia-Application-Id"]))
            return ok
        }
        guard accepted else {
            return FakeWire.answer(
                .unauthorized, "application/json", #"{"error":"unauthorized"}"#, extra: [("WWW-Authenticate", "Basic realm=\"fake\"")])
        }
        // The query is recorded, not echoed: it may carry the key, and the answer goes back to the proxy's caller.
        let body: [String: Any] = ["ok": true, "user": ["id": userID], "method": request.method.rawValue, "path": request.path]
        let data = (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])) ?? Data()
        return FakeWire.answer(.ok, "application/json", String(decoding: data, as: UTF8.self))
    }

    /// RFC 7617 §2: the user-id and password of `Basic base64(user:password)`, split at the first colon.
    static func basicPair(_ header: String?) -> (String, String)? {
        guard let header, header.hasPrefix("Basic "), let decoded = Base64.decode(String(header.dropFirst(6))),
            let text = String(validating: decoded, as: UTF8.self), let colon = text.firstIndex(of: ":")
        else { return nil }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }
}
