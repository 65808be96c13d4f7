import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 server on non-blocking sockets driven by epoll event loops.
///
/// One Dispatch accept source drains `accept4` until `EAGAIN`; each connection joins one of a few
/// workers, each a thread blocking in `epoll_wait` on its sockets, with the work and timers handed to it
/// (``HTTPWorker``). A sweeper enforces deadlines. Handlers that wait run as tasks, so they never hold a worker
/// while they wait; a route may ask for its tasks to run on the connection's worker between waits
/// (``Router/add(_:_:_:onWorker:)``).
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

    /// The event loops connections are spread over, each with its scratch buffer and counters.
    private let workers: [HTTPWorker]
    /// Each worker's counters for this server, by worker index.
    private let metricCells: [HTTPMetricsCell]
    /// Whether the workers are this server's own (opened at start, closed at shutdown) rather than a shared group's.
    private let ownsWorkers: Bool
    /// The group the workers come from, when shared: held so that its threads outlive the server (a group stops
    /// them when it goes).
    private let eventLoops: HTTPEventLoops?
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
    /// Whether the listening socket has been closed, and who waits for it (``shutdown(grace:)``).
    private let listenerClosed = Mutex<(closed: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))
    private var sweepTimer: (any DispatchSourceTimer)?
    private var nextID = 0
    /// Connections to close at the cap, the longest waiting last; accept queue only.
    private var evictionCandidates: [HTTPConnection] = []
    /// Refusals at the cap not yet reported, and when the last report went out (monotonic ns); accept queue only.
    private var refusedSinceLog = 0
    private var lastRefusalLog: UInt64 = 0
    /// Accepts that found no descriptor and connections shed for them, not yet reported, and when the last report
    /// went out (monotonic ns); accept queue only.
    private var descriptorShortages = 0
    private var shedForDescriptors = 0
    private var lastShortageLog: UInt64 = 0
    /// Set when accepting paused for want of a descriptor: the next connection to close resumes it.
    private let resumeOnClose = Atomic<Bool>(false)

    /// Creates a server; nothing listens until `start()`.
    ///
    /// With `eventLoops`, connections run on that group's workers (shared with an ``HTTPClient`` on the
    /// same group) and `configuration.workerCount` is ignored; without, the server opens its own.
    public init(
        configuration: HTTPServerConfiguration, router: Router, observer: (any HTTPServerObserver)? = nil,
        eventLoops: HTTPEventLoops? = nil
    ) {
        self.configuration = configuration
        self.router = router
        if router.hasStreamingRoute {
            bodyMode = { @Sendable (head: HTTPRequestHead) -> Router.BodyMode in router.bodyMode(head.method, head.path) }
        } else {
            bodyMode = nil
        }
        self.observer = observer
        self.eventLoops = eventLoops
        if let eventLoops {
            workers = eventLoops.workers
            ownsWorkers = false
        } else {
            let count =
                configuration.workerCount > 0
                ? configuration.workerCount
                : max(2, System.coreCount)
            workers = (0..<count).map { HTTPWorker(index: $0) }
            ownsWorkers = true
        }
        metricCells = workers.map { _ in HTTPMetricsCell(routeCount: router.routes.count) }
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
        if ownsWorkers { for worker in workers { try worker.open() } }
        let (fd, port) = try Socket.listen(host: configuration.host, port: configuration.port, backlog: configuration.backlog)
        boundPort.store(port, ordering: .relaxed)
        acceptQueue.sync {
            listenFD = fd
            let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: acceptQueue)
            source.setEventHandler { [unowned self] in self.acceptAll() }
            source.setCancelHandler { [weak self] in
                Glibc.close(fd)
                let waiter = self?.listenerClosed.withLock { state in
                    defer { state = (true, nil) }
                    return state.waiter
                }
                waiter?.resume()
            }
            acceptSource = source
            source.activate()
        }
        startSweeper()
    }

    /// Stops accepting, lets in-flight requests finish, closes idle connections, and
    /// returns when every connection is gone or `grace` seconds have passed.
    ///
    /// The listening socket is closed before it returns, so the port may be bound again at once.
    public func shutdown(grace: Double) async {
        draining.store(true, ordering: .relaxed)
        let listening = acceptQueue.sync { () -> Bool in
            guard let source = acceptSource else { return false }
            if acceptPaused { acceptPaused = false; source.resume() }
            source.cancel()
            acceptSource = nil
            return true
        }
        // Dispatch closes the descriptor in the source's cancel handler, which runs later on the accept queue.
        if listening {
            await withCheckedContinuation { continuation in
                let closed = listenerClosed.withLock { state in
                    if !state.closed { state.waiter = continuation }
                    return state.closed
                }
                if closed { continuation.resume() }
            }
        }
        for connection in allConnections() { connection.beginShutdown() }
        let end = Monotonic.now() &+ UInt64(max(grace, 0) * 1e9)
        while openConnections > 0 && Monotonic.now() < end {
            try? await Task.sleep(nanoseconds: 20_000_000)
        }
        for connection in allConnections() { connection.forceClose() }
        while openConnections > 0 && Monotonic.now() < end &+ 1_000_000_000 {
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        sweepQueue.sync {
            sweepTimer?.cancel(); sweepTimer = nil
        }
        if ownsWorkers { for worker in workers { worker.close() } }
    }

    /// Counters for `/metrics`, summed over the workers.
    public func metricsSnapshot() -> HTTPMetricsSnapshot {
        var requests = Array(repeating: UInt64(0), count: (router.routes.count + 1) * 5)
        let width = HTTPMetricsShard.bounds.count + 1
        var latency = Array(repeating: UInt64(0), count: (router.routes.count + 1) * width)
        var sums = Array(repeating: 0.0, count: router.routes.count + 1)
        for cell in metricCells {
            cell.shard.withLock { shard in
                for i in requests.indices { requests[i] &+= shard.requests[i] }
                for i in latency.indices { latency[i] &+= shard.latencyCounts[i] }
                for i in sums.indices { sums[i] += shard.latencySums[i] }
            }
        }
        let labels = router.paths + ["unmatched"]
        return HTTPMetricsSnapshot(
            routes: labels,
            requests: labels.indices.map { Array(requests[$0 * 5..<$0 * 5 + 5]) },
            latencyBounds: HTTPMetricsShard.bounds,
            latencyCounts: labels.indices.map { Array(latency[$0 * width..<($0 + 1) * width]) }, latencySum: sums,
            openConnections: openConnections, acceptedConnections: acceptedCount.load(ordering: .relaxed))
    }

    /// The 404 or 405 answer for a request no route takes, with the route index for metrics.
    /// How each connection asks how a body is read: nil (every body whole) unless a route streams its body.
    let bodyMode: (@Sendable (HTTPRequestHead) -> Router.BodyMode)?

    func routingFailure(for head: HTTPRequestHead) -> (response: Response, route: Int?) {
        router.routingFailure(head.method, head.path)
    }

    private func insert(_ connection: HTTPConnection) {
        connections.withLock { $0[connection.id] = connection }
        openCount.wrappingAdd(1, ordering: .relaxed)
        acceptedCount.wrappingAdd(1, ordering: .relaxed)
    }

    private func allConnections() -> [HTTPConnection] {
        connections.withLock { Array($0.values) }
    }

    /// Suspends the accept source for a while (descriptor exhaustion, or evictions still closing).
    private func pauseAccepting(for seconds: Double) {
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

    /// Forgets a connection that closed; called once per connection, on its worker queue. Its descriptor is free
    /// now: when accepting waits for one, it resumes.
    func connectionClosed(_ connection: HTTPConnection) {
        let removed = connections.withLock { $0.removeValue(forKey: connection.id) }
        if removed != nil { openCount.wrappingSubtract(1, ordering: .relaxed) }
        if resumeOnClose.exchange(false, ordering: .relaxed) {
            acceptQueue.async { [self] in
                if acceptPaused, let source = acceptSource {
                    acceptPaused = false
                    source.resume()
                }
            }
        }
    }

    // MARK: Accepting

    /// Accepts until `EAGAIN`; runs on the accept queue.
    private func acceptAll() {
        // Evicted connections close later, on their worker queues. When those closes lag an eighth
        // of the cap behind (a flood outrunning the workers), stop accepting for a moment: new
        // clients wait in the kernel's backlog for the workers to catch up instead of being refused.
        let ceiling = configuration.maxConnections + HTTPServerConfiguration.evictionSlack(cap: configuration.maxConnections)
        while true {
            if openConnections >= ceiling {
                pauseAccepting(for: 0.01)
                return
            }
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    accept(listenFD, $0, &length)
                }
            }
            if fd < 0 {
                switch errno {
                case EAGAIN, EWOULDBLOCK:
                    return
                case EINTR, ECONNABORTED, EPROTO:
                    continue
                case EMFILE, ENFILE:
                    // Out of descriptors below the cap (files, outbound calls and the like hold the rest): shed
                    // the connections waiting longest on their clients and accept again as soon as one has closed.
                    // The level-triggered source is paused meanwhile so that it does not spin.
                    acceptFoundNoDescriptor(errno)
                    return
                case ENOBUFS, ENOMEM:
                    // Out of kernel memory: stay up, stop the source from spinning, and try again shortly.
                    observer?.serverEvent(
                        level: "error", message: "accept failed: \(String(cString: strerror(errno))); pausing accepts for 100 ms")
                    pauseAccepting(for: 0.1)
                    return
                default:
                    observer?.serverEvent(level: "error", message: "accept failed: \(String(cString: strerror(errno)))")
                    return
                }
            }
            // accept4 is hidden behind _GNU_SOURCE; set the flags the portable way.
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            Socket.setNoDelay(fd)
            // At the cap a connection waiting on its client makes room; when every one is busy
            // in a handler, the newcomer is refused with 503 at once.
            if openConnections >= configuration.maxConnections && !evictLongestWaiting() {
                refuseOverCapacity(fd)
                continue
            }
            register(fd: fd, remoteAddress: Self.describe(address))
        }
    }

    /// `accept` failed with `EMFILE` or `ENFILE`: closes up to ``shedPerShortage`` connections waiting on their
    /// clients and pauses accepting until one of them has closed (100 ms at most, the wait when none could be shed).
    /// Reported at most once a second, with counts.
    private func acceptFoundNoDescriptor(_ code: Int32) {
        // Armed first: a shed connection may close on its worker before this returns. The resume it sends runs on
        // this queue after the pause below.
        resumeOnClose.store(true, ordering: .relaxed)
        var shed = 0
        while shed < Self.shedPerShortage && evictLongestWaiting() { shed += 1 }
        if shed == 0 { resumeOnClose.store(false, ordering: .relaxed) }
        descriptorShortages += 1
        shedForDescriptors += shed
        pauseAccepting(for: 0.1)
        let now = Monotonic.now()
        guard now &- lastShortageLog >= 1_000_000_000 || lastShortageLog == 0 else { return }
        observer?.serverEvent(
            level: shed > 0 ? "warning" : "error",
            message:
                "accept failed: \(String(cString: strerror(code))) (\(descriptorShortages) time(s) since the last report); "
                + "shed \(shedForDescriptors) connection(s) waiting on their clients to free descriptors"
                + " (\(openConnections) open, cap \(configuration.maxConnections))")
        descriptorShortages = 0
        shedForDescriptors = 0
        lastShortageLog = now
    }

    /// Connections closed per accept that found no descriptor.
    private static let shedPerShortage = 8

    private func register(fd: Int32, remoteAddress: String?) {
        nextID += 1
        // The key in the worker's table is unique in the process: workers may be shared with other servers and clients.
        let connection = HTTPConnection(
            fd: fd, id: HTTPWorker.nextMemberID(), remoteAddress: remoteAddress,
            worker: workers[nextID % workers.count], metrics: metricCells[nextID % workers.count], server: self)
        insert(connection)
        connection.start()
    }

    /// At the cap: answers 503 at once and closes, rather than leaving the client hanging.
    private func refuseOverCapacity(_ fd: Int32) {
        var out: [UInt8] = []
        ResponseEncoder.encode(
            router.refusals.response(
                Refusal(status: .serviceUnavailable, code: "over_capacity", message: "Too many connections; try again.")),
            includeBody: true, close: true, keepAliveHTTP10: false, into: &out)
        _ = out.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        Glibc.shutdown(fd, Int32(SHUT_WR))
        Glibc.close(fd)
        // A flood must not become a flood of log lines: at most one line a second, with the count.
        refusedSinceLog += 1
        let now = Monotonic.now()
        guard now &- lastRefusalLog >= 1_000_000_000 || lastRefusalLog == 0 else { return }
        observer?.serverEvent(
            level: "warning",
            message:
                "connection cap \(configuration.maxConnections) reached; refused \(refusedSinceLog) connection(s) since the last report")
        refusedSinceLog = 0
        lastRefusalLog = now
    }

    /// Renders a peer address as `ip` or `ipv6`.
    private static func describe(_ address: sockaddr_storage) -> String? {
        var address = address
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        switch Int32(address.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                    var a = sin.pointee.sin_addr
                    guard inet_ntop(AF_INET, &a, &text, socklen_t(text.count)) != nil else { return nil }
                    return text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
                }
            }
        case AF_INET6:
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { sin6 in
                    var a = sin6.pointee.sin6_addr
                    guard inet_ntop(AF_INET6, &a, &text, socklen_t(text.count)) != nil else { return nil }
                    return text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
                }
            }
        default:
            return nil
        }
    }

    /// Starts the timer that checks every connection's deadline.
    private func startSweeper() {
        let c = configuration
        let shortest = [c.headerTimeout, c.bodyTimeout, c.writeTimeout, c.idleTimeout].min() ?? 1
        let interval = min(max(shortest / 4, 0.05), 0.5)
        let timer = DispatchSource.makeTimerSource(queue: sweepQueue)
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(10))
        timer.setEventHandler { [unowned self] in self.sweep() }
        sweepQueue.sync { sweepTimer = timer }
        timer.activate()
    }

    private func sweep() {
        let now = Monotonic.now()
        for connection in allConnections() { connection.checkDeadline(now: now) }
    }

    /// Makes room at the cap by closing a connection that waits on its client; false when none waits.
    ///
    /// Idle keep-alive connections, heads and bodies still arriving and unread responses
    /// all qualify, the longest wait first, so a flood of slow clients cannot lock out a
    /// new client (or a health probe) that sends its request at once. Connections whose
    /// handler is running are never chosen. Scanning every connection on each accept slows
    /// accepting at a large cap, and a sample of the table picks fresh connections (a probe
    /// among them) once the old ones in it are gone; so one scan ranks the oldest waiting
    /// connections and the next accepts take them in turn (`evictionCandidates`), scanning
    /// again when they run out.
    private func evictLongestWaiting() -> Bool {
        var scanned = false
        while true {
            if evictionCandidates.isEmpty {
                guard !scanned else { return false }
                scanned = true
                rankEvictionCandidates()
            }
            guard let victim = evictionCandidates.popLast() else { return false }
            // Ranked a while ago: skip one that has since been served, closed or chosen.
            if victim.requestEviction() { return true }
        }
    }

    /// Ranks the connections waiting on their clients, the longest wait last, keeping an eighth of the cap (at least 64).
    private func rankEvictionCandidates() {
        var waiting: [(since: UInt64, connection: HTTPConnection)] = []
        for connection in allConnections() {
            if let since = connection.waitingSince { waiting.append((since, connection)) }
        }
        waiting.sort { $0.since > $1.since }
        let keep = max(64, configuration.maxConnections / 8)
        evictionCandidates = waiting.suffix(keep).map(\.connection)
    }
}

/// Facts about the machine.
enum System {
    /// Online processors.
    static var coreCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }
}
