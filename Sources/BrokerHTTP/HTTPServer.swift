#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization

/// An HTTP/1.1 server on non-blocking sockets driven by Dispatch sources.
///
/// One accept source drains `accept4` until `EAGAIN`; each connection gets read (and,
/// when needed, write) sources on one of a few serial worker queues. A sweeper
/// enforces deadlines. Handlers that wait run as tasks, so they never hold a worker.
///
/// `@unchecked Sendable`: the mutable listener state is only touched on `acceptQueue`;
/// the connection table and flags are behind a `Mutex` or atomics.
public final class HTTPServer: @unchecked Sendable {
    /// The configuration the server was created with.
    public let configuration: HTTPServerConfiguration
    /// The routes.
    public let router: Router
    /// Receives per-request and server events.
    public let observer: (any HTTPServerObserver)?

    let workers: [HTTPWorker]
    private let acceptQueue = DispatchQueue(label: "token-broker.http.accept", qos: .userInitiated)
    private let sweepQueue = DispatchQueue(label: "token-broker.http.sweep")
    private let connections = Mutex<[Int: HTTPConnection]>([:])
    private let openCount = Atomic<Int>(0)
    private let acceptedCount = Atomic<UInt64>(0)
    private let draining = Atomic<Bool>(false)
    private let boundPort = Atomic<Int>(0)
    private var listenFD: Int32 = -1
    private var acceptSource: (any DispatchSourceRead)?
    private var acceptPaused = false
    private var sweepTimer: (any DispatchSourceTimer)?
    private var nextID = 0
    /// Connections to close at the cap, the longest waiting last; accept queue only.
    var evictionCandidates: [HTTPConnection] = []
    /// Refusals at the cap not yet reported, and when the last report went out (monotonic ns); accept queue only.
    var refusedSinceLog = 0
    var lastRefusalLog: UInt64 = 0

    /// Creates a server; nothing listens until `start()`.
    public init(configuration: HTTPServerConfiguration, router: Router, observer: (any HTTPServerObserver)? = nil) {
        self.configuration = configuration
        self.router = router
        self.observer = observer
        let count = configuration.workerCount > 0
            ? configuration.workerCount
            : max(2, System.coreCount)
        workers = (0..<count).map { HTTPWorker(index: $0, routeCount: router.routes.count) }
    }

    /// The port actually bound (useful with port 0).
    public var port: Int { boundPort.load(ordering: .relaxed) }
    /// Connections open now.
    public var openConnections: Int { openCount.load(ordering: .relaxed) }
    /// Whether shutdown has begun; responses then carry `Connection: close`.
    public var isDraining: Bool { draining.load(ordering: .relaxed) }

    /// Binds, listens and starts accepting. Throws when the address cannot be bound.
    public func start() throws {
        signal(SIGPIPE, SIG_IGN)
        let (fd, port) = try Socket.listen(host: configuration.host, port: configuration.port, backlog: configuration.backlog)
        boundPort.store(port, ordering: .relaxed)
        acceptQueue.sync {
            listenFD = fd
            let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: acceptQueue)
            source.setEventHandler { [unowned self] in self.acceptAll() }
            source.setCancelHandler { Glibc.close(fd) }
            acceptSource = source
            source.activate()
        }
        startSweeper()
    }

    /// Stops accepting, lets in-flight requests finish, closes idle connections, and
    /// returns when every connection is gone or `grace` seconds have passed.
    public func shutdown(grace: Double) async {
        draining.store(true, ordering: .relaxed)
        acceptQueue.sync {
            if let source = acceptSource {
                if acceptPaused { acceptPaused = false; source.resume() }
                source.cancel()
                acceptSource = nil
            }
        }
        for connection in connections.withLock({ Array($0.values) }) {
            connection.worker.queue.async {
                if connection.phase == .idle { connection.close() }
            }
        }
        let end = Monotonic.now() &+ UInt64(max(grace, 0) * 1e9)
        while openConnections > 0 && Monotonic.now() < end {
            try? await Task.sleep(nanoseconds: 20_000_000)
        }
        for connection in connections.withLock({ Array($0.values) }) {
            connection.worker.queue.async { connection.close() }
        }
        while openConnections > 0 && Monotonic.now() < end &+ 1_000_000_000 {
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        sweepQueue.sync { sweepTimer?.cancel(); sweepTimer = nil }
    }

    /// Counters for `/metrics`, summed over the workers.
    public func metricsSnapshot() -> HTTPMetricsSnapshot {
        var requests = Array(repeating: UInt64(0), count: (router.routes.count + 1) * 5)
        var latency = Array(repeating: UInt64(0), count: HTTPMetricsShard.bounds.count + 1)
        var sum = 0.0
        for worker in workers {
            worker.metrics.withLock { shard in
                for i in requests.indices { requests[i] &+= shard.requests[i] }
                for i in latency.indices { latency[i] &+= shard.latencyCounts[i] }
                sum += shard.latencySum
            }
        }
        let labels = router.paths + ["unmatched"]
        return HTTPMetricsSnapshot(
            routes: labels,
            requests: labels.indices.map { Array(requests[$0 * 5..<$0 * 5 + 5]) },
            latencyBounds: HTTPMetricsShard.bounds, latencyCounts: latency, latencySum: sum,
            openConnections: openConnections, acceptedConnections: acceptedCount.load(ordering: .relaxed))
    }

    /// The 404 or 405 answer for a request no route takes, with the route index for metrics.
    func routingFailure(for head: HTTPRequestHead) -> (response: Response, route: Int?) {
        switch router.resolve(head.method, head.path) {
        case .methodNotAllowed(let allow, let route):
            var headers = HTTPHeaders()
            headers.add(name: "Allow", value: allow)
            return (Response.error(.methodNotAllowed, code: "method_not_allowed",
                                   message: "\(head.method.rawValue) is not allowed here; use \(allow).",
                                   headers: headers), route)
        case .notFound, .handler:
            return (Response.error(.notFound, code: "not_found", message: "No such endpoint."), nil)
        }
    }

    var listenDescriptor: Int32 { listenFD }
    var sweepQueueForTimer: DispatchQueue { sweepQueue }

    func installSweeper(_ timer: any DispatchSourceTimer) {
        sweepQueue.sync { sweepTimer = timer }
    }

    func takeNextID() -> Int {
        nextID += 1
        return nextID
    }

    func insert(_ connection: HTTPConnection) {
        connections.withLock { $0[connection.id] = connection }
        openCount.wrappingAdd(1, ordering: .relaxed)
        acceptedCount.wrappingAdd(1, ordering: .relaxed)
    }

    func allConnections() -> [HTTPConnection] {
        connections.withLock { Array($0.values) }
    }

    /// Suspends the accept source for a while (descriptor exhaustion, or evictions still closing).
    func pauseAccepting(for seconds: Double) {
        guard let source = acceptSource, !acceptPaused else { return }
        acceptPaused = true
        source.suspend()
        acceptQueue.asyncAfter(deadline: .now() + seconds) { [self] in
            if acceptPaused, let source = acceptSource {
                acceptPaused = false
                source.resume()
            }
        }
    }

    func connectionClosed(_ connection: HTTPConnection) {
        let removed = connections.withLock { $0.removeValue(forKey: connection.id) }
        if removed != nil { openCount.wrappingSubtract(1, ordering: .relaxed) }
    }
}
