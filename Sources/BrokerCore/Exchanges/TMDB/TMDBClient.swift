import BrokerCrypto
import Foundation

/// Talks TMDB API v3 session authentication: request token, approval page, session, account, logout.
///
/// Every call carries the application's key: as the `api_key` query parameter,
/// or as `Authorization: Bearer` when the key is an API Read Access Token (a JWT).
/// Errors carry TMDB's `status_code`, never its body, the key or a session id.
public struct TMDBClient: Sendable {
    /// The settings of the provider this client talks to.
    public let settings: TMDBSettings
    /// The shared sending, step naming, redaction and reporting of provider calls.
    let providerCall: ProviderCall

    /// How long TMDB keeps an unused request token: 60 minutes (v3 "How do I generate a session id?").
    public static let requestTokenLifetime: Double = 3600

    /// Creates a client for the provider `settings` describe that calls out through `upstream`.
    public init(settings: TMDBSettings, upstream: any UpstreamClient) {
        self.init(settings: settings, call: ProviderCall(upstream: upstream))
    }

    /// Creates a client whose calls go through `call` (an exchange's, which reports them).
    init(settings: TMDBSettings, call: ProviderCall) {
        self.settings = settings
        self.providerCall = call
    }

    /// The API root without a trailing slash.
    var baseURL: String {
        var base = settings.apiBaseURL
        while base.hasSuffix("/") { base.removeLast() }
        return base
    }

    /// Whether the key is an API Read Access Token: three base64url segments starting `eyJ` (a JWT), sent as Bearer.
    ///
    /// A v3 API key is 32 hex digits, so the two shapes cannot be confused.
    public var usesBearer: Bool { Self.isReadAccessToken(settings.apiKey.value) }

    /// Whether `key` is an API Read Access Token (a JWT) rather than a v3 API key; the API proxy asks it too.
    public static func isReadAccessToken(_ key: String) -> Bool {
        guard key.hasPrefix("eyJ") else { return false }
        let segments = key.split(separator: ".", omittingEmptySubsequences: false)
        return segments.count == 3
            && segments.allSatisfy { segment in
                !segment.isEmpty && segment.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
            }
    }

    /// Step 1: `GET /authentication/token/new`; checks `success`, `request_token` and `expires_at`.
    public func createRequestToken() async throws(BrokerError) -> String {
        let step = ProviderStep.requestToken
        let fields = try await call("GET", "/authentication/token/new", step: step)
        try Self.requireSuccess(fields, step: step.rawValue)
        guard let token = ProviderValue.text(fields["request_token"]), Self.isPlainToken(token) else {
            throw .upstreamError(step: step.rawValue, reason: "the response has no usable request_token")
        }
        guard ProviderValue.text(fields["expires_at"]) != nil else {
            throw .upstreamError(step: step.rawValue, reason: "the response has no expires_at")
        }
        return token
    }

    /// Step 2: `{authenticate_url}/{request_token}?redirect_to=…`, where the user approves and TMDB sends the browser back.
    public func approvalURL(requestToken: String, redirectTo: String) -> String {
        var root = settings.authenticateURL ?? settings.authorizeURL
        while root.hasSuffix("/") { root.removeLast() }
        return FormEncoding.url(root + "/" + PercentEncoding.rfc3986(requestToken), adding: [("redirect_to", redirectTo)])
    }

    /// Step 3: `POST /authentication/session/new` with `{"request_token"}`; returns the session id.
    public func createSession(requestToken: String) async throws(BrokerError) -> Secret {
        let step = ProviderStep.session
        let fields = try await call("POST", "/authentication/session/new", json: ["request_token": requestToken], step: step)
        try Self.requireSuccess(fields, step: step.rawValue)
        guard let session = ProviderValue.text(fields["session_id"]), ProviderCall.isUsableToken(session) else {
            throw .upstreamError(step: step.rawValue, reason: "the response has no usable session_id")
        }
        return Secret(session)
    }

    /// Step 4: `GET /account?session_id=…`; returns the numeric `id` as text and the `username`.
    public func fetchAccount(sessionID: Secret) async throws(BrokerError) -> (uid: String, username: String?) {
        let step = ProviderStep.account
        let fields = try await call("GET", "/account", query: [("session_id", sessionID.value)], step: step, sensitive: [sessionID.value])
        guard let uid = ProviderValue.identifier(fields["id"]) else {
            throw .upstreamError(step: step.rawValue, reason: "the account response has no id")
        }
        try ProviderUserID.check(uid, step: step.rawValue)
        return (uid, ProviderValue.displayName(fields["username"]))
    }

    /// Logs the session out: `DELETE /authentication/session` with `{"session_id"}`.
    public func deleteSession(_ sessionID: Secret) async throws(BrokerError) {
        let step = ProviderStep.revoke
        let fields = try await call(
            "DELETE", "/authentication/session", json: ["session_id": sessionID.value], step: step,
            sensitive: [sessionID.value])
        try Self.requireSuccess(fields, step: step.rawValue)
    }

    /// Sends one API call with the key and returns the checked JSON object.
    func call(
        _ method: String, _ path: String, query: [(String, String)] = [], json: [String: String]? = nil,
        step: ProviderStep, sensitive: [String] = []
    ) async throws(BrokerError) -> [String: Any] {
        var headers: [(String, String)] = [("Accept", "application/json"), ("User-Agent", ProviderCall.userAgent)]
        var pairs = query
        if usesBearer {
            headers.append(("Authorization", "Bearer " + settings.apiKey.value))
        } else {
            pairs.append(("api_key", settings.apiKey.value))
        }
        var body: [UInt8] = []
        if let json {
            headers.append(("Content-Type", "application/json;charset=utf-8"))
            body = Self.encodeJSON(json)
        }
        let request = UpstreamRequest(method: method, url: FormEncoding.url(baseURL + path, adding: pairs), headers: headers, body: body)
        return try await providerCall.perform(request, step: step, secrets: sensitive + [settings.apiKey.value]) {
            response throws(BrokerError) in try Self.checkedObject(of: response, step: step.rawValue)
        }
    }

    /// A flat JSON object of strings, keys sorted.
    static func encodeJSON(_ object: [String: String]) -> [UInt8] {
        let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return data.map(Array.init) ?? Array("{}".utf8)
    }

    /// Whether a request token can go into a URL path as it is: 1–128 of `A-Z a-z 0-9 - . _ ~`.
    static func isPlainToken(_ token: String) -> Bool {
        !token.isEmpty && token.utf8.count <= 128 && PercentEncoding.rfc3986(token) == token
    }
}
