import BrokerHTTP
import Foundation
import Synchronization

/// TheMovieDB's API v3 session authentication, in process or on a real socket (reference providers.md §3).
///
/// Every API call must carry the key as `api_key` or the read access token as Bearer,
/// else `401 {"status_code":7,…}`. `session/new` is accepted as a JSON POST and, as legacy
/// clients use it, as a GET with `?request_token=`. An unknown or used token gets
/// `401 {"status_code":33,…}`, an unapproved one `{"failure":true,"status_code":17,…}`.
/// The approval step lives at `/authenticate/{token}` and sends the browser to `redirect_to`.
public final class FakeTMDBProvider: Sendable {
    /// What the approval step answers.
    public enum Approval: Sendable, Equatable {
        /// `approved=true`.
        case approve
        /// `denied=true` (seen in client code; not confirmed in TMDB's documentation).
        case deny
        /// No answer parameter at all.
        case noAnswer
        /// `approved=false`.
        case approvedFalse
    }

    /// What tests may change, and what the fake saw.
    public struct State: Sendable {
        /// The user's answer at the approval step.
        public var approval = Approval.approve
        /// Append `?request_token=…` even when `redirect_to` has a query already, as a careless server might.
        public var appendsBlindly = false
        /// Every token is refused at `session/new` as expired (code 33).
        public var expireTokens = false
        /// Requests to each endpoint.
        public var tokenCalls = 0, sessionCalls = 0, accountCalls = 0, deleteCalls = 0
        /// The method of every `session/new` request.
        public var sessionMethods: [String] = []
        /// Sessions ended by `DELETE /3/authentication/session`.
        public var deletedSessions: [String] = []
        /// Calls authenticated by Bearer token, and by `api_key`.
        public var bearerCalls = 0, apiKeyCalls = 0
        var approved: Set<String> = []
        var issued: Set<String> = []
        var sessions: [String: Int] = [:]
    }

    /// The account every session is for.
    public static let accountID = 548
    /// The key (or read access token) calls must carry.
    public let apiKey: String
    /// Its routes, to call in process or to serve.
    public let router: Router
    /// The socket side.
    public let listener: FakeProviderServer
    let box: Box

    /// Holds the state the routes share.
    final class Box: Sendable {
        let state = Mutex(State())
    }

    /// Makes a fake that will listen on `host`:`port` once started.
    public init(apiKey: String, host: String = "127.0.0.1", port: Int = 0) {
        self.apiKey = apiKey
        let box = Box()
        self.box = box
        var router = Router()
        router.add(
            .GET, "/3/authentication/token/new",
            .sync({ request in
                if let refusal = Self.refuseKey(request, key: apiKey, box: box) { return refusal }
                // A real request token is 40 hex digits.
                let token = FakeWire.randomHex(20)
                box.state.withLock { s in
                    s.tokenCalls += 1
                    s.issued.insert(token)
                }
                return Self.json(
                    .ok, #"{"success":true,"expires_at":"\#(Self.expiry(Date().addingTimeInterval(3600)))","request_token":"\#(token)"}"#)
            }))
        router.add(
            .GET, prefix: "/authenticate/",
            .sync({ request in
                Self.approve(String(request.path.dropFirst("/authenticate/".count)), request, box: box)
            }))
        let sessionNew: Router.Handler = .sync({ request in
            if let refusal = Self.refuseKey(request, key: apiKey, box: box) { return refusal }
            let fromBody = (try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])?["request_token"] as? String
            let token = request.method == .GET ? request.query("request_token") : fromBody
            return Self.createSession(token, method: request.method.rawValue, box: box)
        })
        router.add(.POST, "/3/authentication/session/new", sessionNew)
        router.add(.GET, "/3/authentication/session/new", sessionNew)
        router.add(
            .GET, "/3/account",
            .sync({ request in
                if let refusal = Self.refuseKey(request, key: apiKey, box: box) { return refusal }
                let known = box.state.withLock { s in
                    s.accountCalls += 1
                    return request.query("session_id").flatMap { s.sessions[$0] } != nil
                }
                guard known else {
                    return Self.json(
                        .unauthorized,
                        #"{"status_code":3,"status_message":"Authentication failed: You do not have permissions to access the service.","success":false}"#
                    )
                }
                return Self.json(
                    .ok,
                    #"{"avatar":{"gravatar":{"hash":"c9e9fc152ee756a900db85757c29815d"},"tmdb":{"avatar_path":null}},"id":\#(Self.accountID),"iso_639_1":"en","iso_3166_1":"CA","name":"Travis Bell","include_adult":false,"username":"travisbell"}"#
                )
            }))
        router.add(
            .DELETE, "/3/authentication/session",
            .sync({ request in
                if let refusal = Self.refuseKey(request, key: apiKey, box: box) { return refusal }
                let session = (try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])?["session_id"] as? String
                let removed = box.state.withLock { s -> Bool in
                    s.deleteCalls += 1
                    guard let session, s.sessions.removeValue(forKey: session) != nil else { return false }
                    s.deletedSessions.append(session)
                    return true
                }
                guard removed else {
                    return Self.json(
                        .notFound,
                        #"{"status_code":6,"status_message":"Invalid id: The pre-requisite id is invalid or not found.","success":false}"#)
                }
                return Self.json(.ok, #"{"success":true}"#)
            }))
        self.router = router
        listener = FakeProviderServer(router: router, host: host, port: port)
    }

    /// Makes a fake and starts it on 127.0.0.1 with a port the kernel picks.
    public static func started(apiKey: String) throws -> FakeTMDBProvider {
        let fake = FakeTMDBProvider(apiKey: apiKey)
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

    /// The providers-file entry pointing the `tmdb` preset at this fake; the key comes from `TMDB_API_KEY`.
    public var providerEntry: String {
        #""tmdb": {"api_base_url": "\#(baseURL)/3", "authenticate_url": "\#(baseURL)/authenticate"}"#
    }

    // MARK: Endpoints

    /// TMDB's 401 code 7 unless the call carries the key (query) or the read access token (Bearer).
    static func refuseKey(_ request: Request, key: String, box: Box) -> Response? {
        if request.headers["Authorization"] == "Bearer " + key {
            box.state.withLock { $0.bearerCalls += 1 }
            return nil
        }
        if request.query("api_key") == key {
            box.state.withLock { $0.apiKeyCalls += 1 }
            return nil
        }
        return json(
            .unauthorized, #"{"status_code":7,"status_message":"Invalid API key: You must be granted a valid key.","success":false}"#)
    }

    /// The approval step: sends the browser to `redirect_to` with the token and the user's answer appended.
    static func approve(_ token: String, _ request: Request, box: Box) -> Response {
        guard let redirect = request.query("redirect_to") else {
            return FakeWire.answer(.ok, "text/html", "<html>approve?</html>")
        }
        let (answer, blindly) = box.state.withLock { s -> (String, Bool) in
            guard s.issued.contains(token) else { return ("", s.appendsBlindly) }
            switch s.approval {
            case .approve:
                s.approved.insert(token)
                return ("&approved=true", s.appendsBlindly)
            case .deny: return ("&denied=true", s.appendsBlindly)
            case .approvedFalse: return ("&approved=false", s.appendsBlindly)
            case .noAnswer: return ("", s.appendsBlindly)
            }
        }
        let separator = redirect.contains("?") && !blindly ? "&" : "?"
        return FakeWire.redirect(redirect + separator + "request_token=\(token)" + answer)
    }

    /// `session/new`: one session per approved, unused token.
    static func createSession(_ token: String?, method: String, box: Box) -> Response {
        enum Outcome {
            case invalid, denied
            case session(String)
        }
        let outcome = box.state.withLock { s -> Outcome in
            s.sessionCalls += 1
            s.sessionMethods.append(method)
            guard let token, !s.expireTokens, s.issued.remove(token) != nil else { return .invalid }
            guard s.approved.remove(token) != nil else { return .denied }
            let session = "TMDB-SESSION-SENTINEL-" + FakeWire.randomHex(16)
            s.sessions[session] = accountID
            return .session(session)
        }
        switch outcome {
        case .invalid:
            return json(
                .unauthorized,
                #"{"status_code":33,"status_message":"Invalid request token: The request token is either expired or invalid.","success":false}"#
            )
        case .denied:
            return json(.unauthorized, #"{"failure":true,"status_code":17,"status_message":"Session denied."}"#)
        case .session(let session):
            return json(.ok, #"{"success":true,"session_id":"\#(session)"}"#)
        }
    }

    /// `2016-08-26 17:04:39 UTC`, TMDB's `expires_at`.
    static func expiry(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
        return formatter.string(from: date)
    }

    static func json(_ status: HTTPStatus, _ body: String) -> Response {
        FakeWire.answer(status, "application/json;charset=utf-8", body)
    }
}
