import BrokerCore
import BrokerTestSupport
import Foundation
import Synchronization
import Testing

@testable import BrokerApp

/// deploy/nginx/forward-auth.conf.template in a real nginx: a protected service behind it is called with the
/// account's current token, which neither the caller nor any answer it gets ever shows.
@Suite(.scoped) struct ForwardAuthNginxTests {
    /// The template with its variables filled, as the nginx image's entrypoint does.
    static func configuration(_ values: [String: String]) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var text = try String(contentsOf: root.appendingPathComponent("deploy/nginx/forward-auth.conf.template"), encoding: .utf8)
        for (name, value) in values { text = text.replacingOccurrences(of: "${\(name)}", with: value) }
        #expect(!text.contains("${"), "a variable of the template was left unfilled")
        return text
    }

    @Test func theProtectedServiceGetsTheCurrentTokenAndTheCallerNeverSeesIt() async throws {
        let s = try await RefreshEndToEndTests.setUp()
        let seen = Mutex<[String]>([])
        let service = try LocalHTTPServer { request in
            let authorization = request.split(separator: "\r\n").first { $0.lowercased().hasPrefix("authorization:") }
            seen.withLock {
                $0.append(authorization.map { String($0.dropFirst("authorization:".count)).trimmingCharacters(in: .whitespaces) } ?? "")
            }
            return "HTTP/1.1 200 OK\r\nContent-Length: 9\r\nConnection: close\r\n\r\nprotected"
        }
        defer { service.stop() }
        let nginx = try await NginxServer.scoped { ports in
            (try? Self.configuration([
                "LISTEN": "127.0.0.1:\(ports[0])", "BROKER_ORIGIN": "http://127.0.0.1:\(s.broker.port)",
                "BROKER_API_KEY": BrokerHarness.apiKey, "BROKER_ACCOUNT": "acme:4242",
                "PROTECTED_ORIGIN": "http://127.0.0.1:\(service.port)",
            ])) ?? ""
        }
        func call() async throws -> TestHTTP.Reply {
            // The caller's own Authorization must not reach the service.
            try #require(
                await TestHTTP.send(port: nginx.ports[0], target: "/reports/7", headers: [("Authorization", "Bearer caller-junk")]))
        }
        let first = try await call()
        #expect(first.status == 200 && first.body == "protected", "\(first.status) \(nginx.errorLog)")
        #expect(seen.withLock { $0 } == ["Bearer ACME-ACCESS-SENTINEL-2"])

        // Due: refreshed by the broker before nginx passes the request on.
        s.advance(3400)
        #expect(try await call().status == 200)
        #expect(seen.withLock { $0 } == ["Bearer ACME-ACCESS-SENTINEL-2", "Bearer ACME-ACCESS-SENTINEL-3"])
        #expect(s.provider.refreshCalls == 1)

        // Gone from the broker: the caller gets nginx's 500 and the service is not called, as the next call shows.
        let deleted = await TestHTTP.send(
            port: s.broker.port, method: "DELETE", target: "/account?id=acme:4242", headers: RefreshEndToEndTests.api)
        #expect(deleted?.status == 204)
        let refused = try await call()
        #expect(refused.status == 500)
        for reply in [first, refused] {
            #expect(!reply.body.contains("SENTINEL"))
            #expect(!reply.headers.contains { $0.1.contains("SENTINEL") })
        }
        _ = await s.browser.connect(provider: "acme")
        #expect(try await call().status == 200)
        #expect(seen.withLock { $0.count } == 3)
        #expect(!s.broker.log.contains("ACME-ACCESS-SENTINEL"))
    }
}
