import BrokerCore
import BrokerHTTP
import BrokerTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A webhook receiver on a real socket (our HTTP server on 127.0.0.1): records every POST to `/hooks` and answers
/// as scripted (a status, or nothing until the test releases it); can be stopped and started again on the same port.
final class WebhookReceiver: Sendable {
    /// How the receiver answers one request.
    enum Answer: Sendable, Equatable {
        /// Answer with this status at once.
        case status(Int)
        /// Wait until ``release()``, then answer with this status.
        case gated(Int)
        /// Answer with this status and a body of this many bytes.
        case sized(Int, bytes: Int)
    }

    /// One request as it arrived, and how it was answered.
    struct Received: Sendable {
        var eventID: String?
        var signature: String?
        var contentType: String?
        var body: [UInt8]
        var answer: Answer

        /// A top-level field of the JSON body.
        func field(_ name: String) -> String? {
            (try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])?[name] as? String
        }

        /// A field of the body's `data` object.
        func data(_ name: String) -> Any? {
            ((try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])?["data"] as? [String: Any])?[name]
        }

        var type: String? { field("type") }
        var id: String? { field("id") }
        var accepted: Bool { answer == .status(200) || answer == .sized(200, bytes: answerBytes) }
        /// The body size of a `.sized` answer, else 0.
        var answerBytes: Int {
            if case .sized(_, let bytes) = answer { return bytes }
            return 0
        }
    }

    private struct State {
        var received: [Received] = []
        var script: [Answer] = []
        var fallback: Answer = .status(200)
        /// Gated requests waiting for ``release()``.
        var gated: [CheckedContinuation<Void, Never>] = []
        /// Requests being answered now, and the most there were at once since ``resetConcurrency()``.
        var inFlight = 0
        var mostInFlight = 0
    }

    /// The state route closures share with the receiver.
    private final class Shared: Sendable {
        let state = Mutex(State())
    }

    private let shared = Shared()
    private let server = Mutex<HTTPServer?>(nil)
    private let placeholder = Mutex<Int32?>(nil)
    /// The port, kept across a stop and start.
    let port: Int

    /// Starts on 127.0.0.1 on a free port below the ephemeral range: while the receiver is stopped its port is held by
    /// a bound socket, and a port of the ephemeral range can meanwhile be the local port of another test's connection
    /// (seen as EADDRINUSE in a loaded CI run).
    init() throws {
        var attempt = 0
        var started: HTTPServer?
        while started == nil {
            attempt += 1
            do {
                started = try Self.listen(port: Loopback.freePortOutsideEphemeralRange(), shared: shared)
            } catch {
                // Another test bound the port between the check and the listen: pick another, a few times.
                if attempt >= 20 { throw error }
            }
        }
        let found = started!
        port = found.port
        server.withLock { $0 = found }
    }

    /// `http://127.0.0.1:<port>/hooks`.
    var url: String { "http://127.0.0.1:\(port)/hooks" }

    /// Answers the next requests with `answers`, then with `fallback`.
    func script(_ answers: [Answer], then fallback: Answer = .status(200)) {
        shared.state.withLock {
            $0.script = answers
            $0.fallback = fallback
        }
    }

    /// Every request so far, in arrival order.
    var received: [Received] { shared.state.withLock { $0.received } }

    /// How many requests are being answered now.
    var inFlight: Int { shared.state.withLock { $0.inFlight } }

    /// How many gated requests wait for ``release()`` now.
    var waiting: Int { shared.state.withLock { $0.gated.count } }

    /// The most requests in flight at once since the last ``resetConcurrency()``.
    var mostInFlight: Int { shared.state.withLock { $0.mostInFlight } }

    /// Starts counting the most requests in flight at once afresh, from those in flight now.
    func resetConcurrency() { shared.state.withLock { $0.mostInFlight = $0.inFlight } }

    /// Lets every gated request waiting now be answered.
    func release() {
        let waiting = shared.state.withLock { state -> [CheckedContinuation<Void, Never>] in
            defer { state.gated = [] }
            return state.gated
        }
        for continuation in waiting { continuation.resume() }
    }

    /// The requests answered 200: the deliveries the broker counts as done.
    var accepted: [Received] { received.filter(\.accepted) }

    /// Stops listening and closes connections: the receiver is down.
    ///
    /// The port stays bound (a socket that never listens, so connections are
    /// refused), or another test's listener could take it before ``start()``.
    func stop() async {
        let running = server.withLock { current -> HTTPServer? in
            defer { current = nil }
            return current
        }
        await running?.shutdown(grace: 0)
        // Shutdown closes the listener before it returns, and its accepted connections within a second; on a loaded
        // machine one may close later (its close runs on its worker), and while it is open the port cannot be bound.
        if let running { _ = await eventually { running.openConnections == 0 } }
        let placeholder = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var reuse: Int32 = 1
        setsockopt(placeholder, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        // A socket that holds the port for a moment (one of this receiver's connections closing late on a loaded
        // machine, or another test's socket given this number) lets go of it in its own time: bind until then.
        var code: Int32 = 0
        let bound = await eventually {
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(placeholder, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            code = result == 0 ? 0 : errno
            return result == 0
        }
        guard bound else {
            // The listener and every accepted connection are closed by now; a port still taken a minute on is a defect.
            Issue.record("the receiver's port \(port) could not be held while it is down (errno \(code))")
            close(placeholder)
            return
        }
        self.placeholder.withLock { $0 = placeholder }
    }

    /// Listens again on the same port.
    func start() throws {
        if let held = placeholder.withLock({ current -> Int32? in
            defer { current = nil }; return current
        }) {
            close(held)
        }
        let started = try Self.listen(port: port, shared: shared)
        server.withLock { $0 = started }
    }

    private static func listen(port: Int, shared: Shared) throws -> HTTPServer {
        var router = Router()
        router.add(
            .POST, "/hooks",
            .async({ request in
                let answer = shared.state.withLock { s in s.script.isEmpty ? s.fallback : s.script.removeFirst() }
                let item = Received(
                    eventID: request.headers["Broker-Event-Id"], signature: request.headers["Broker-Signature"],
                    contentType: request.headers["Content-Type"], body: request.body, answer: answer)
                shared.state.withLock {
                    $0.received.append(item)
                    $0.inFlight += 1
                    $0.mostInFlight = max($0.mostInFlight, $0.inFlight)
                }
                defer { shared.state.withLock { $0.inFlight -= 1 } }
                switch answer {
                case .status(let code):
                    return Response(status: HTTPStatus(code, code == 200 ? "OK" : "Failed"))
                case .gated(let code):
                    await withCheckedContinuation { continuation in shared.state.withLock { $0.gated.append(continuation) } }
                    return Response(status: HTTPStatus(code, code == 200 ? "OK" : "Failed"))
                case .sized(let code, let bytes):
                    return Response(
                        status: HTTPStatus(code, code == 200 ? "OK" : "Failed"),
                        body: [UInt8](repeating: UInt8(ascii: "x"), count: bytes))
                }
            }))
        let server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: port), router: router)
        try server.start()
        return server
    }
}
