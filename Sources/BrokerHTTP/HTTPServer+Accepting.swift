#if canImport(Glibc)
import Glibc
#endif
import Dispatch

extension HTTPServer {
    /// Accepts until `EAGAIN`; runs on the accept queue.
    func acceptAll() {
        // Evicted connections close later, on their worker queues. When those closes lag an eighth
        // of the cap behind (a flood outrunning the workers), stop accepting for a moment: new
        // clients wait in the kernel's backlog for the workers to catch up instead of being refused.
        let ceiling = configuration.maxConnections + max(16, configuration.maxConnections / 8)
        while true {
            if openConnections >= ceiling {
                pauseAccepting(for: 0.01)
                return
            }
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    accept(listenDescriptor, $0, &length)
                }
            }
            if fd < 0 {
                switch errno {
                case EAGAIN, EWOULDBLOCK:
                    return
                case EINTR, ECONNABORTED, EPROTO:
                    continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // Out of descriptors: stay up, stop the level-triggered source from
                    // spinning, and try again shortly (connections may close meanwhile).
                    observer?.serverEvent(level: "error", message: "accept failed: \(String(cString: strerror(errno))); pausing accepts for 100 ms")
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

    private func register(fd: Int32, remoteAddress: String?) {
        let id = takeNextID()
        let worker = workers[id % workers.count]
        let connection = HTTPConnection(fd: fd, id: id, remoteAddress: remoteAddress, worker: worker, server: self)
        // The idle deadline runs from the accept, so at the cap a connection its worker has not
        // started yet (a burst) can make room too, instead of the newcomer being refused.
        connection.setDeadline(.idle, after: configuration.idleTimeout)
        insert(connection)
        worker.queue.async { connection.start() }
    }

    /// At the cap: answers 503 at once and closes, rather than leaving the client hanging.
    private func refuseOverCapacity(_ fd: Int32) {
        var out: [UInt8] = []
        ResponseEncoder.encode(
            Response.error(.serviceUnavailable, code: "over_capacity", message: "Too many connections; try again."),
            includeBody: true, close: true, keepAliveHTTP10: false, into: &out)
        _ = out.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        Glibc.shutdown(fd, Int32(SHUT_WR))
        Glibc.close(fd)
        // A flood must not become a flood of log lines: at most one line a second, with the count.
        refusedSinceLog += 1
        let now = Monotonic.now()
        guard now &- lastRefusalLog >= 1_000_000_000 || lastRefusalLog == 0 else { return }
        observer?.serverEvent(level: "warning",
                              message: "connection cap \(configuration.maxConnections) reached; refused \(refusedSinceLog) connection(s) since the last report")
        refusedSinceLog = 0
        lastRefusalLog = now
    }

    /// Renders a peer address as `ip` or `ipv6`.
    static func describe(_ address: sockaddr_storage) -> String? {
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
    func startSweeper() {
        let c = configuration
        let shortest = [c.headerTimeout, c.bodyTimeout, c.writeTimeout, c.idleTimeout].min() ?? 1
        let interval = min(max(shortest / 4, 0.05), 0.5)
        let timer = DispatchSource.makeTimerSource(queue: sweepQueueForTimer)
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(10))
        timer.setEventHandler { [unowned self] in self.sweep() }
        installSweeper(timer)
        timer.activate()
    }

    private func sweep() {
        let now = Monotonic.now()
        for connection in allConnections() {
            let at = connection.deadline.load(ordering: .relaxed)
            if at != 0 && now >= at {
                connection.worker.queue.async { connection.deadlinePassed(now: now) }
            }
        }
    }

    /// Makes room at the cap by closing a connection that waits on its client; false when none waits.
    ///
    /// Idle keep-alive connections, heads and bodies still arriving and unread responses
    /// all qualify, the longest wait first, so a flood of slow clients cannot lock out a
    /// new client (or a health probe) that sends its request at once. Connections whose
    /// handler is running are never chosen. Scanning every connection on each accept at a
    /// cap of 10,000 slowed accepting enough to drop probes' SYNs, and a sample of the
    /// table (tried before) picked fresh connections once the old ones in it were gone,
    /// a probe among them; so one scan ranks the oldest waiting connections and the next
    /// accepts take them in turn (`HTTPServer.evictionCandidates`), scanning again when they run out.
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
            guard victim.waitingSince != nil,
                  victim.evictionPending.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged
            else { continue }
            let expected = victim.deadline.load(ordering: .relaxed)
            victim.worker.queue.async { victim.evict(chosenWithDeadline: expected) }
            return true
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
