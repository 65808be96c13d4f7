import BrokerHTTP
import Foundation
import Synchronization

/// An in-process TheMovieDB speaking API v3 session authentication on a real socket (providers.md §3).
///
/// Every API call must carry the key as `api_key` or the read access token as
/// Bearer, else `401 {"status_code":7,…}`. `session/new` is accepted as a JSON
/// POST and, like legacy clients use it, as a GET with `?request_token=`. An
/// unknown or used token gets `401 {"status_code":33,…}`, an unapproved one
/// `{"failure":true,"status_code":17,…}`. The approval page lives at
/// `/authenticate/{token}`; the router matches exact paths, so the fake hands out
/// tokens from a pool registered up front.
final class FakeTMDB: Sendable {
    /// What the approval page answers.
    enum Approval: Sendable { case approve, deny, noAnswer, approvedFalse }

    struct State {
        var approval = Approval.approve
        /// Append `?request_token=…` even when redirect_to has a query already, as a careless server might.
        var appendsBlindly = false
        /// Every token is refused at `session/new` as expired (code 33).
        var expireTokens = false
        var tokenCalls = 0
        var sessionCalls = 0
        var sessionMethods: [String] = []
        var accountCalls = 0
        var deleteCalls = 0
        var deletedSessions: [String] = []
        var bearerCalls = 0
        var apiKeyCalls = 0
        var next = 0
        var approved: Set<String> = []
        var issued: Set<String> = []
        var sessions: [String: Int] = [:]
    }

    static let accountID = 548
    let apiKey: String
    let pool: [String]
    let server: HTTPServer
    let box: StateBox

    /// Holds the fake's counters and modes; route closures share it.
    final class StateBox: Sendable {
        let state = Mutex(State())
    }

    /// Starts on 127.0.0.1:0; calls must carry `apiKey` as `api_key`, or as a Bearer token when it is a JWT.
    init(apiKey: String) throws {
        self.apiKey = apiKey
        let box = StateBox()
        self.box = box
        let pool = (0..<48).map { _ in (UUID().uuidString + UUID().uuidString).replacingOccurrences(of: "-", with: "").lowercased().prefix(40) }
            .map(String.init)
        self.pool = pool
        var router = Router()
        let key = apiKey
        router.add(.GET, "/3/authentication/token/new", .sync({ request in
            if let refusal = FakeTMDB.refuseKey(request, key: key, box: box) { return refusal }
            let token = box.state.withLock { s -> String in
                s.tokenCalls += 1
                let token = pool[s.next % pool.count]
                s.next += 1
                s.issued.insert(token)
                return token
            }
            let expires = Date().addingTimeInterval(3600)
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
            return FakeTMDB.json(.ok, #"{"success":true,"expires_at":"\#(formatter.string(from: expires))","request_token":"\#(token)"}"#)
        }))
        for token in pool {
            router.add(.GET, "/authenticate/\(token)", .sync({ request in FakeTMDB.approve(token, request, box: box) }))
        }
        let sessionNew: Router.Handler = .sync({ request in
            if let refusal = FakeTMDB.refuseKey(request, key: key, box: box) { return refusal }
            let fromBody = (try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])?["request_token"] as? String
            let token = request.method == .GET ? request.query("request_token") : fromBody
            return FakeTMDB.createSession(token, method: request.method.rawValue, box: box)
        })
        router.add(.POST, "/3/authentication/session/new", sessionNew)
        router.add(.GET, "/3/authentication/session/new", sessionNew)
        router.add(.GET, "/3/account", .sync({ request in
            if let refusal = FakeTMDB.refuseKey(request, key: key, box: box) { return refusal }
            let known = box.state.withLock { s in
                s.accountCalls += 1
                return request.query("session_id").flatMap { s.sessions[$0] } != nil
            }
            guard known else {
                return FakeTMDB.json(.unauthorized, #"{"status_code":3,"status_message":"Authentication failed: You do not have permissions to access the service.","success":false}"#)
            }
            return FakeTMDB.json(.ok, #"{"avatar":{"gravatar":{"hash":"c9e9fc152ee756a900db85757c29815d"},"tmdb":{"avatar_path":null}},"id":\#(FakeTMDB.accountID),"iso_639_1":"en","iso_3166_1":"CA","name":"Travis Bell","include_adult":false,"username":"travisbell"}"#)
        }))
        router.add(.DELETE, "/3/authentication/session", .sync({ request in
            if let refusal = FakeTMDB.refuseKey(request, key: key, box: box) { return refusal }
            let session = (try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])?["session_id"] as? String
            let removed = box.state.withLock { s -> Bool in
                s.deleteCalls += 1
                guard let session, s.sessions.removeValue(forKey: session) != nil else { return false }
                s.deletedSessions.append(session)
                return true
            }
            guard removed else {
                return FakeTMDB.json(.notFound, #"{"status_code":6,"status_message":"Invalid id: The pre-requisite id is invalid or not found.","success":false}"#)
            }
            return FakeTMDB.json(.ok, #"{"success":true}"#)
        }))
        server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0), router: router)
        try server.start()
    }

    var base: String { "http://127.0.0.1:\(server.port)" }
    var tokenCalls: Int { box.state.withLock { $0.tokenCalls } }
    var sessionCalls: Int { box.state.withLock { $0.sessionCalls } }
    var sessionMethods: [String] { box.state.withLock { $0.sessionMethods } }
    var deleteCalls: Int { box.state.withLock { $0.deleteCalls } }
    var deletedSessions: [String] { box.state.withLock { $0.deletedSessions } }
    var bearerCalls: Int { box.state.withLock { $0.bearerCalls } }
    var apiKeyCalls: Int { box.state.withLock { $0.apiKeyCalls } }
    func set(_ change: @Sendable (inout State) -> Void) { box.state.withLock { change(&$0) } }

    /// The providers-file entry pointing the `tmdb` preset at this fake; the key comes from `TMDB_API_KEY`.
    var providerEntry: String {
        #""tmdb": {"api_base_url": "\#(base)/3", "authenticate_url": "\#(base)/authenticate"}"#
    }

    // MARK: Endpoints

    /// TMDB's 401 code 7 unless the call carries the key (query) or the read access token (Bearer).
    static func refuseKey(_ request: Request, key: String, box: StateBox) -> Response? {
        if request.headers["Authorization"] == "Bearer " + key {
            box.state.withLock { $0.bearerCalls += 1 }
            return nil
        }
        if request.query("api_key") == key {
            box.state.withLock { $0.apiKeyCalls += 1 }
            return nil
        }
        return json(.unauthorized, #"{"status_code":7,"status_message":"Invalid API key: You must be granted a valid key.","success":false}"#)
    }

    /// The approval page: sends the browser to `redirect_to` with the token and the user's answer appended.
    static func approve(_ token: String, _ request: Request, box: StateBox) -> Response {
        guard let redirect = request.query("redirect_to") else {
            return Response(status: .ok, headers: HTTPHeaders([("Content-Type", "text/html")]), body: Array("<html>approve?</html>".utf8))
        }
        let answer = box.state.withLock { s -> String in
            switch s.approval {
            case .approve:
                s.approved.insert(token)
                return "&approved=true"
            case .deny: return "&denied=true"
            case .approvedFalse: return "&approved=false"
            case .noAnswer: return ""
            }
        }
        let blindly = box.state.withLock { $0.appendsBlindly }
        let separator = redirect.contains("?") && !blindly ? "&" : "?"
        return Response(status: .found, headers: HTTPHeaders([("Location", redirect + separator + "request_token=\(token)" + answer)]))
    }

    /// `session/new`: one session per approved, unused token.
    static func createSession(_ token: String?, method: String, box: StateBox) -> Response {
        enum Outcome { case invalid, denied, session(String) }
        let outcome = box.state.withLock { s -> Outcome in
            s.sessionCalls += 1
            s.sessionMethods.append(method)
            guard let token, !s.expireTokens, s.issued.remove(token) != nil else { return .invalid }
            guard s.approved.remove(token) != nil else { return .denied }
            let session = "TMDB-SESSION-SENTINEL-" + UUID().uuidString
            s.sessions[session] = accountID
            return .session(session)
        }
        switch outcome {
        case .invalid:
            return json(.unauthorized, #"{"status_code":33,"status_message":"Invalid request token: The request token is either expired or invalid.","success":false}"#)
        case .denied:
            return json(.unauthorized, #"{"failure":true,"status_code":17,"status_message":"Session denied."}"#)
        case .session(let session):
            return json(.ok, #"{"success":true,"session_id":"\#(session)"}"#)
        }
    }

    static func json(_ status: HTTPStatus, _ body: String) -> Response {
        Response(status: status, headers: HTTPHeaders([("Content-Type", "application/json;charset=utf-8")]), body: Array(body.utf8))
    }
}
