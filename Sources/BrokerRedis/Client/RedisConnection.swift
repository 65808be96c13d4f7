import BrokerTLS
import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One TCP connection to Redis whose every call runs on its own serial queue.
///
/// Socket work blocks (in poll(2), bounded by the timeout), so it never runs on
/// Swift's cooperative pool nor on the HTTP server's workers: ``send(_:)`` hops
/// to `queue` and resumes the awaiting task with the replies. The connection is
/// opened lazily, with `AUTH` and `SELECT` from the URL, and reopened after any
/// failure; every failure closes it, since the reply stream may be out of step.
final class RedisConnection: @unchecked Sendable {
    // @unchecked: `fd`, `tlsSession`, `parser`, `readBuffer`, `exchanges` and `trackingRedirect` are touched
    // only by blocks running on `queue`, which is serial; the rest is immutable.

    /// The serial queue every socket call of this connection runs on.
    let queue: DispatchQueue
    /// Where this connection connects: a fixed server, or the primary the sentinels name.
    let target: RedisTarget
    /// The server and credentials of the current (or last) socket; changes only at connect, on the queue.
    var url: RedisURL
    /// How long one exchange (connect, or write and read) may take, in nanoseconds.
    let timeoutNanoseconds: UInt64
    /// The backoff shared with the other connections of the pool.
    let gate: RedisReconnectGate
    /// The socket, or -1 while closed.
    var fd: Int32 = -1
    /// The TLS session over `fd` for `rediss://`, set once its handshake is done; nil for plain TCP.
    var tlsSession: TLSSession?
    /// The session's last write waits for input (a TLS key update), so the exchange polls for input, not output.
    var tlsWriteWantsRead = false
    /// The session's last read waits for the socket to take output.
    var tlsReadWantsWrite = false
    /// The reply parser for the current socket.
    var parser = RESPParser()
    /// Scratch space for recv(2).
    var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
    /// How many write-then-read exchanges this connection made; a pipeline is one.
    private(set) var exchanges = 0
    /// The client id this connection's key tracking sends invalidations to, nil while tracking is off.
    ///
    /// Tracking belongs to one TCP connection on the server: a reconnect turns it off.
    var trackingRedirect: Int?
    /// Where round trips and connects are counted.
    let metrics: RedisMetrics

    /// Creates a closed connection to `url`; nothing is opened until the first ``send(_:)``.
    convenience init(url: RedisURL, timeout: Double, gate: RedisReconnectGate, label: String, metrics: RedisMetrics = RedisMetrics()) {
        self.init(target: RedisTarget(.server(url), timeout: timeout), timeout: timeout, gate: gate, label: label, metrics: metrics)
    }

    /// Creates a closed connection to `target`; nothing is opened (or asked of sentinels) until the first ``send(_:)``.
    init(target: RedisTarget, timeout: Double, gate: RedisReconnectGate, label: String, metrics: RedisMetrics = RedisMetrics()) {
        self.target = target
        switch target.location {
        case .server(let url): self.url = url
        case .sentinel(let sentinel): self.url = RedisURL(host: sentinel.primaryName, port: 1)
        }
        self.timeoutNanoseconds = UInt64(max(0.001, timeout) * 1_000_000_000)
        self.gate = gate
        self.metrics = metrics
        self.queue = DispatchQueue(label: label, qos: .userInitiated)
    }

    deinit {
        disconnect()
    }

    /// Sends `commands` in one write and returns their replies in order, error replies included.
    ///
    /// Runs on the connection's queue; the calling task is suspended, not blocked.
    func send(_ commands: [RedisCommand]) async throws(RedisError) -> [RESPValue] {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<[RESPValue], RedisError>, Never>) in
            queue.async {
                do throws(RedisError) {
                    continuation.resume(returning: .success(try self.sendOnQueue(commands)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    /// Sends `commands` with key tracking on and redirected to client `redirect`; returns the replies and whether tracking held.
    ///
    /// When this connection's tracking is off or goes elsewhere (a reconnect, or
    /// a new invalidation connection), `CLIENT TRACKING ON REDIRECT <id> OPTIN`
    /// goes first in the same write. Tracking that the server refused (the
    /// redirect client is gone) returns `tracked == false`: what `commands` read
    /// must then not be cached, since no invalidation would follow.
    func sendTracked(_ commands: [RedisCommand], redirect: Int) async throws(RedisError) -> (replies: [RESPValue], tracked: Bool) {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<([RESPValue], Bool), RedisError>, Never>) in
            queue.async {
                do throws(RedisError) {
                    continuation.resume(returning: .success(try self.sendTrackedOnQueue(commands, redirect: redirect)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    private func sendTrackedOnQueue(_ commands: [RedisCommand], redirect: Int) throws(RedisError) -> ([RESPValue], Bool) {
        try connectIfNeeded()
        guard trackingRedirect != redirect else { return (try sendOnQueue(commands), true) }
        // OPTIN: only reads preceded by CLIENT CACHING yes are tracked, not WATCH, list or lock reads.
        let enable = RedisCommand("CLIENT", "TRACKING", "ON", "REDIRECT", String(redirect), "OPTIN")
        let replies = try sendOnQueue([enable] + commands)
        let tracked = replies[0] == .simpleString("OK")
        trackingRedirect = tracked ? redirect : nil
        return (Array(replies.dropFirst()), tracked)
    }

    /// How many exchanges were made, read on the queue.
    func exchangeCount() async -> Int {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: self.exchanges) }
        }
    }

    /// ``send(_:)`` on the queue: (re)connects when needed, then makes one exchange.
    private func sendOnQueue(_ commands: [RedisCommand]) throws(RedisError) -> [RESPValue] {
        guard !commands.isEmpty else { return [] }
        guard commands.allSatisfy({ !$0.arguments.isEmpty }) else {
            throw .protocolError("a command has no arguments")
        }
        try connectIfNeeded()
        exchanges += 1
        let started = RedisSocket.monotonicNow()
        defer { metrics.recordRoundTrip(nanoseconds: RedisSocket.monotonicNow() - started) }
        let replies: [RESPValue]
        do {
            replies = try exchange(commands)
        } catch .timeout {
            // A server that accepts but does not answer is down too: let the other calls fail fast for a while.
            gate.recordFailure("redis at \(url.endpoint) did not answer within \(timeoutDescription)")
            target.forget(url)
            throw .timeout
        } catch {
            target.forget(url)
            throw error
        }
        // A primary demoted under us (a failover) refuses writes with READONLY: never retry them there.
        if let refusal = replies.lazy.compactMap(Self.readOnlyRefusal).first {
            disconnect()
            target.forget(url)
            throw .unavailable("redis at \(url.endpoint) is a replica now: \(refusal)")
        }
        return replies
    }

    /// The text of a `READONLY` error in `reply` or among its elements (an `EXEC` result), if any.
    static func readOnlyRefusal(_ reply: RESPValue) -> String? {
        switch reply {
        case .error(let message):
            return message.hasPrefix("READONLY") ? message : nil
        case .array(let elements?):
            return elements.lazy.compactMap(readOnlyRefusal).first
        case .array(nil), .simpleString, .integer, .bulk:
            return nil
        }
    }

    /// Reconnects when the socket is closed or the server closed it while idle; on the queue.
    func connectIfNeeded() throws(RedisError) {
        if fd >= 0, tlsSession.map(idleTLSConnectionIsStale) ?? RedisSocket.idleConnectionIsStale(fd) { disconnect() }
        if fd < 0 { try connect() }
    }

    /// Opens the socket and sends `AUTH`, `SELECT` and `PING`; records the outcome with the gate.
    ///
    /// Inside a backoff window it fails at once with the last reason.
    private func connect() throws(RedisError) {
        try gate.checkAttempt(endpoint: target.endpoint)
        do {
            url = try target.resolve()
            let deadline = RedisSocket.monotonicNow() + timeoutNanoseconds
            fd = try RedisSocket.open(host: url.host, port: url.port, deadline: deadline, now: RedisSocket.monotonicNow)
            // The TLS handshake shares the connect's deadline; AUTH and the rest go through the session.
            if let tls = url.tls { try startTLS(tls, deadline: deadline) }
            try handshake()
        } catch {
            disconnect()
            target.forget(url)
            switch error {
            case .unavailable(let message): gate.recordFailure(message)
            case .timeout: gate.recordFailure("redis at \(url.endpoint) did not answer within \(timeoutDescription)")
            case .server(let message), .protocolError(let message): gate.recordFailure(message)
            }
            metrics.recordConnect(succeeded: false)
            throw error
        }
        metrics.recordConnect(succeeded: true)
        gate.recordSuccess()
    }

    /// Logs in, selects the database the URL names and checks the server answers `PING`.
    ///
    /// A refusal is ``RedisError/unavailable(_:)`` with the server's text; the
    /// `PING` makes a server that accepts connections but never answers count
    /// as down before any caller's command is sent.
    private func handshake() throws(RedisError) {
        var hello: [RedisCommand] = []
        if let password = url.password {
            // AUTH [username] password: the two-argument form (Redis 6 ACL) only with a user name.
            let arguments = [url.username, password.value].compactMap { $0 }
            hello.append(RedisCommand(["AUTH"] + arguments))
        }
        if url.database != 0 { hello.append(RedisCommand("SELECT", String(url.database))) }
        hello.append(RedisCommand("PING"))
        if target.requiresPrimary { hello.append(RedisCommand("ROLE")) }
        let replies = try exchange(hello)
        for (command, reply) in zip(hello, replies) {
            if case .error(let message) = reply {
                throw .unavailable("redis at \(url.endpoint) refused \(command.name): \(message)")
            }
        }
        guard replies[hello.count - (target.requiresPrimary ? 2 : 1)] == .simpleString("PONG") else {
            throw .protocolError("redis at \(url.endpoint) answered PING with something other than PONG")
        }
        // A sentinel's answer may predate a failover: only a server that says it is the primary is used.
        if target.requiresPrimary, let role = replies.last?.array?.first?.string, role != "master" {
            throw .unavailable("redis at \(url.endpoint) is a \(role), not the primary (a failover in progress?)")
        }
    }

    /// The timeout for messages, such as `2 s` or `0.3 s`.
    private var timeoutDescription: String {
        let seconds = Double(timeoutNanoseconds) / 1_000_000_000
        return seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
    }

    /// Closes the socket (after close_notify on a sound TLS session) and forgets any partial reply.
    func disconnect() {
        tlsSession?.close()
        tlsSession = nil
        tlsWriteWantsRead = false
        tlsReadWantsWrite = false
        if fd >= 0 { close(fd) }
        fd = -1
        parser = RESPParser()
        trackingRedirect = nil
    }
}
