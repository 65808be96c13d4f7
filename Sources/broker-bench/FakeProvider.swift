import BrokerHTTP
import Foundation
import Synchronization

/// A fake Weibo that auto-approves, for flow benchmarks: the provider must not be the bottleneck.
enum FakeProvider {
    static let clientID = "bench-client"
    static let clientSecret = "bench-client-secret-0123456789"

    static func start(port: Int) throws -> HTTPServer {
        let counter = Atomic<Int>(0)
        var router = Router()
        router.get("/oauth2/authorize") { request in
            guard let redirect = request.query("redirect_uri"), let state = request.query("state") else {
                return Response.json(.badRequest, "{\"error\":\"invalid_request\"}")
            }
            let code = "code-\(counter.wrappingAdd(1, ordering: .relaxed).newValue)"
            return Response(status: .found, headers: HTTPHeaders([("Location", "\(redirect)?code=\(code)&state=\(state)")]))
        }
        router.add(.POST, "/oauth2/access_token", .sync({ _ in
            let n = counter.wrappingAdd(1, ordering: .relaxed).newValue
            let body = "{\"access_token\":\"2.00bench\(n)\",\"remind_in\":\"157679999\",\"expires_in\":157679999,\"uid\":\"\(n % 100_000)\",\"isRealName\":\"true\"}"
            return Response(status: .ok, headers: HTTPHeaders([("Content-Type", "text/plain;charset=UTF-8")]), body: Array(body.utf8))
        }))
        let server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: port), router: router)
        try server.start()
        return server
    }

    /// The providers file pointing the weibo preset at the fake.
    static func providersFile(port: Int) -> String {
        let base = "http://127.0.0.1:\(port)"
        return """
        {"providers": {"weibo": {"client_id": "\(clientID)", "client_secret": "\(clientSecret)",
          "authorize_url": "\(base)/oauth2/authorize", "token_url": "\(base)/oauth2/access_token",
          "user_url": "\(base)/2/account/get_uid.json", "revoke_url": null}}}
        """
    }
}
