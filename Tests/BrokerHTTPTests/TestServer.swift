import BrokerTestSupport
import Foundation
import Synchronization

@testable import BrokerHTTP

/// Starts a real server on 127.0.0.1:0 with test routes, and stops it afterwards.
enum TestServer {
    /// The test routes' refusals: `code: message` as `text/x-refusal`, so a test sees the server's own answers go
    /// through the router's renderer.
    static let refusals = RefusalRenderer { refusal in
        var headers = refusal.headers
        headers.add(name: "Content-Type", value: "text/x-refusal")
        return Response(status: refusal.status, headers: headers, body: Array("\(refusal.code): \(refusal.message)".utf8))
    }

    /// `/fixed`'s fields: one list every answer shares, written out once (a CR LF in a value is sent as spaces).
    static let fixedFields = FixedHeaders([("Cache-Control", "no-store"), ("Pragma", "no-cache"), ("X-Line", "a\r\nb")])

    /// Routes used by the live tests; `/slow` signals `slowEntered` as its handler starts and, given
    /// `slowRelease`, answers once that is signalled instead of after `ms` milliseconds.
    static func router(slowEntered: TestEvent? = nil, slowRelease: TestEvent? = nil) -> Router {
        var router = Router(refusals: refusals)
        router.get("/healthz") { _ in Response.json(.ok, "{\"status\":\"ok\"}") }
        router.add(
            .POST, "/echo",
            .sync({ request in
                Response(status: .ok, headers: HTTPHeaders([("Content-Type", "application/octet-stream")]), body: request.body)
            }))
        router.add(
            .GET, "/query",
            .sync({ request in
                Response.json(.ok, JSONString.quote(request.query("q") ?? "<none>"))
            }))
        router.add(
            .GET, "/slow",
            .async({ request in
                slowEntered?.signal()
                let ms = Int(request.query("ms") ?? "2000") ?? 2000
                if let slowRelease {
                    // Never answers before the test releases it; the bound only ends a handler a failed test left.
                    _ = await slowRelease.wait(timeout: 600)
                } else {
                    try? await Task.sleep(nanoseconds: UInt64(ms) * 1_000_000)
                }
                return Response.json(.ok, "{\"slept_ms\":\(ms)}")
            }))
        router.add(
            .GET, "/maybe",
            .fastPath(
                { request in
                    request.query("fast") == "1" ? Response.json(.ok, "\"fast\"") : nil
                },
                otherwise: { _ in
                    try? await Task.sleep(nanoseconds: 20_000_000)
                    return Response.json(.ok, "\"slow\"")
                }))
        router.add(
            .GET, "/fixed",
            .sync({ request in
                // The shared list, written out once as a route's fixed fields are; `change` edits this answer's copy.
                var response = Response(status: .ok, fixed: fixedFields, body: Array("fixed".utf8))
                switch request.query("change") {
                case "add": response.headers.add(name: "X-Added", value: "yes")
                case "replace": response.headers.replaceOrAdd(name: "Pragma", value: "again")
                case "remove": response.headers.remove(name: "Pragma")
                default: break
                }
                return response
            }))
        router.add(
            .GET, "/big",
            .sync({ request in
                let size = Int(request.query("size") ?? "1000000") ?? 1_000_000
                return Response(status: .ok, body: [UInt8](repeating: UInt8(ascii: "x"), count: size))
            }))
        return router
    }

    static func start(
        _ configure: (inout HTTPServerConfiguration) -> Void = { _ in },
        observer: (any HTTPServerObserver)? = nil, slowEntered: TestEvent? = nil,
        slowRelease: TestEvent? = nil
    ) throws -> HTTPServer {
        var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0)
        // Generous deadlines: the server's threads keep time while a test's client, a task, can wait tens of seconds
        // for one of the two cooperative threads of a loaded machine (a 4 MB answer was cut at the 30 s write
        // deadline before its reader ran). A test of a deadline sets its own.
        configuration.headerTimeout = 600
        configuration.bodyTimeout = 600
        configuration.writeTimeout = 600
        configuration.idleTimeout = 600
        configure(&configuration)
        let server = HTTPServer(
            configuration: configuration, router: router(slowEntered: slowEntered, slowRelease: slowRelease),
            observer: observer)
        try server.start()
        return server
    }

    static func with<T>(
        _ configure: (inout HTTPServerConfiguration) -> Void = { _ in },
        observer: (any HTTPServerObserver)? = nil, slowEntered: TestEvent? = nil,
        slowRelease: TestEvent? = nil, _ body: (HTTPServer) async throws -> T
    ) async throws -> T {
        let server = try start(configure, observer: observer, slowEntered: slowEntered, slowRelease: slowRelease)
        do {
            let result = try await body(server)
            await server.shutdown(grace: 1)
            return result
        } catch {
            await server.shutdown(grace: 1)
            throw error
        }
    }
}

/// Keeps the server events a test server reports.
final class ServerEvents: HTTPServerObserver {
    private let events = Mutex<[String]>([])
    func requestCompleted(method: String, path: String, status: Int, seconds: Double) {}
    func serverEvent(level: String, message: String) { events.withLock { $0.append(message) } }
    /// The messages so far that contain `text`.
    func messages(containing text: String) -> [String] { events.withLock { $0.filter { $0.contains(text) } } }
}
