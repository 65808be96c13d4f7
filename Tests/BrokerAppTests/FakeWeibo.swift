import BrokerHTTP
import Foundation
import Synchronization

/// An in-process Sina Weibo speaking Weibo's real wire format on a real socket:
/// token answers are JSON labelled `text/plain;charset=UTF-8`, `uid` is a string,
/// `remind_in` a string, errors carry `error_code` numbers (providers.md §1).
final class FakeWeibo: Sendable {
    /// How the token endpoint behaves.
    enum TokenMode: Sendable { case ok, http500, html, empty, invalidGrant, noAccessToken, slow(Double), errorIn200 }

    struct State {
        var tokenCalls = 0
        var revokeCalls = 0
        var uidCalls = 0
        var codes: [String: String] = [:]     // code → redirect_uri
        var mode: TokenMode = .ok
        var deny = false
        var expiresIn = 157_679_999
        var uid = "3733034601"
        var issued = 0
    }

    static let clientID = "1234567890"
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
        router.add(.GET, "/oauth2/authorize", .sync({ request in
            guard request.query("client_id") == FakeWeibo.clientID, let redirect = request.query("redirect_uri"),
                  let st = request.query("state") else {
                return Response.json(.badRequest, "{\"error\":\"invalid_request\",\"error_code\":21323}")
            }
            let (deny, code) = box.state.withLock { s -> (Bool, String) in
                s.issued += 1
                let code = "WEIBO-CODE-SENTINEL-\(s.issued)-\(UUID().uuidString)"
                s.codes[code] = redirect
                return (s.deny, code)
            }
            let location = deny
                ? "\(redirect)?error_uri=%2Foauth2%2Fauthorize&error=access_denied&error_description=user%20denied%20your%20request.&error_code=21330&state=\(st)"
                : "\(redirect)?code=\(code)&state=\(st)"
            return Response(status: .found, headers: HTTPHeaders([("Location", location)]))
        }))
        let secret = clientSecret
        router.add(.POST, "/oauth2/access_token", .async({ request in
            let form = Dictionary(URLEncodedForm.parse(String(decoding: request.body, as: UTF8.self)).map { ($0.name, $0.value) },
                                  uniquingKeysWith: { a, _ in a })
            let (mode, expected, expiresIn, uid) = box.state.withLock { s in
                s.tokenCalls += 1
                let redirect = form["code"].flatMap { s.codes.removeValue(forKey: $0) }
                return (s.mode, redirect, s.expiresIn, s.uid)
            }
            let plain = HTTPHeaders([("Content-Type", "text/plain;charset=UTF-8"), ("Server", "weibo")])
            guard form["client_id"] == FakeWeibo.clientID, form["client_secret"] == secret else {
                return Response(status: .unauthorized, headers: plain, body: Array("{\"error\":\"invalid_client\",\"error_code\":21324,\"request\":\"/oauth2/access_token\",\"error_uri\":\"/oauth2/access_token\",\"error_description\":\"client_secret error.\"}".utf8))
            }
            guard form["grant_type"] == "authorization_code", let redirect = expected, form["redirect_uri"] == redirect else {
                return Response(status: .badRequest, headers: plain, body: Array("{\"error\":\"invalid_grant\",\"error_code\":21325,\"request\":\"/oauth2/access_token\",\"error_uri\":\"/oauth2/access_token\",\"error_description\":\"invalid authorization code:\(form["code"] ?? "")\"}".utf8))
            }
            switch mode {
            case .ok: break
            case .http500: return Response(status: .internalServerError, headers: plain, body: Array("oops".utf8))
            case .html: return Response(status: .ok, headers: HTTPHeaders([("Content-Type", "text/html")]), body: Array("<html><body>maintenance</body></html>".utf8))
            case .empty: return Response(status: .ok, headers: plain)
            case .invalidGrant:
                return Response(status: .badRequest, headers: plain, body: Array("{\"error\":\"invalid_grant\",\"error_code\":21325,\"request\":\"/oauth2/access_token\",\"error_uri\":\"/oauth2/access_token\",\"error_description\":\"invalid authorization code:\(form["code"] ?? "")\"}".utf8))
            case .noAccessToken: return Response(status: .ok, headers: plain, body: Array("{\"expires_in\":3600,\"uid\":\"\(uid)\"}".utf8))
            case .errorIn200: return Response(status: .ok, headers: plain, body: Array("{\"error\":\"expired_token\",\"error_code\":21327}".utf8))
            case .slow(let seconds): try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            }
            let token = "2.00WEIBO-TOKEN-SENTINEL-\(UUID().uuidString)"
            let body = "{\"access_token\":\"\(token)\",\"remind_in\":\"\(expiresIn)\",\"expires_in\":\(expiresIn),\"uid\":\"\(uid)\",\"isRealName\":\"true\"}"
            return Response(status: .ok, headers: plain, body: Array(body.utf8))
        }))
        router.add(.GET, "/2/account/get_uid.json", .sync({ _ in
            let uid = box.state.withLock { s in s.uidCalls += 1; return s.uid }
            return Response(status: .ok, headers: HTTPHeaders([("Content-Type", "application/json;charset=UTF-8")]), body: Array("{\"uid\":\(uid)}".utf8))
        }))
        router.add(.POST, "/oauth2/revokeoauth2", .sync({ _ in
            box.state.withLock { $0.revokeCalls += 1 }
            return Response(status: .ok, headers: HTTPHeaders([("Content-Type", "text/plain;charset=UTF-8")]), body: Array("{\"result\":\"true\"}".utf8))
        }))
        server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0), router: router)
        try server.start()
    }

    var base: String { "http://127.0.0.1:\(server.port)" }
    var tokenCalls: Int { box.state.withLock { $0.tokenCalls } }
    var revokeCalls: Int { box.state.withLock { $0.revokeCalls } }
    func set(_ change: @Sendable (inout State) -> Void) { box.state.withLock { change(&$0) } }

    /// The providers-file entry pointing the `weibo` preset at this fake.
    var providerEntry: String {
        """
        "weibo": {"client_id": "\(FakeWeibo.clientID)", "client_secret": "${FAKE_WEIBO_SECRET}",
                  "authorize_url": "\(base)/oauth2/authorize", "token_url": "\(base)/oauth2/access_token",
                  "user_url": "\(base)/2/account/get_uid.json", "revoke_url": "\(base)/oauth2/revokeoauth2"}
        """
    }
}
