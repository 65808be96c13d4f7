/// A Redis client speaking RESP2 over a small pool of TCP connections; safe to share between tasks.
///
/// Connections open on first use with `AUTH` and `SELECT` from the URL. A
/// broken connection is reopened by the next call; while the server cannot be
/// reached, connect attempts back off exponentially (50 ms doubling to 2 s) and
/// calls in between fail at once with ``RedisError/unavailable(_:)``. When the
/// server returns, the same client works again; nothing has to be recreated.
/// Socket calls run on each connection's own serial queue, never on Swift's
/// cooperative pool, and each exchange is bounded by `timeout`.
public final class RedisClient: Sendable {
    /// The server this client talks to, or the sentinels naming it.
    public var location: RedisLocation { target.location }
    /// Where the connections connect, shared by all of them (and the cache's invalidation connection).
    let target: RedisTarget
    /// Seconds one exchange (connect, or a command or pipeline and its replies) may take.
    public let timeout: Double
    /// The connections.
    let pool: RedisConnectionPool
    /// Round trips, pool waits and connects of this client (and its cache, when one is built on it).
    public var metrics: RedisMetrics { pool.metrics }

    /// Creates a client for `url` with `poolSize` connections; connects lazily, so it never fails.
    public convenience init(url: RedisURL, poolSize: Int = 4, timeout: Double = 2) {
        self.init(location: .server(url), poolSize: poolSize, timeout: timeout)
    }

    /// Creates a client for a server or for the primary a set of sentinels names; connects lazily, so it never fails.
    ///
    /// `minimumReplicas`: how many replicas must confirm each transaction before it
    /// counts as written (nil: 1 with Sentinel, 0 for a single server).
    public convenience init(location: RedisLocation, poolSize: Int = 4, timeout: Double = 2, minimumReplicas: Int? = nil) {
        self.init(location: location, poolSize: poolSize, timeout: timeout, gate: RedisReconnectGate(), minimumReplicas: minimumReplicas)
    }

    /// Creates a client whose connections share `gate`, for tests that drive the backoff.
    convenience init(url: RedisURL, poolSize: Int, timeout: Double, gate: RedisReconnectGate) {
        self.init(location: .server(url), poolSize: poolSize, timeout: timeout, gate: gate)
    }

    private init(location: RedisLocation, poolSize: Int, timeout: Double, gate: RedisReconnectGate, minimumReplicas: Int? = nil) {
        self.target = RedisTarget(location, timeout: timeout, minimumReplicas: minimumReplicas)
        self.timeout = timeout
        self.pool = RedisConnectionPool(target: target, size: poolSize, timeout: timeout, gate: gate, metrics: RedisMetrics())
    }

    /// Runs one command of text arguments, such as `command("SET", "k", "v")`; an error reply throws ``RedisError/server(_:)``.
    public func command(_ arguments: String...) async throws(RedisError) -> RESPValue {
        try await command(RedisCommand(arguments))
    }

    /// Runs one command; an error reply throws ``RedisError/server(_:)``.
    public func command(_ command: RedisCommand) async throws(RedisError) -> RESPValue {
        let reply = try await pipeline(commands: [command])[0]
        if case .error(let message) = reply { throw .server(message) }
        return reply
    }

    /// Sends every command in one write on one connection and returns each reply in order.
    ///
    /// An error reply of one command is returned in its place as ``RESPValue/error(_:)``;
    /// only a failure of the connection itself throws.
    public func pipeline(_ commands: [[String]]) async throws(RedisError) -> [RESPValue] {
        try await pipeline(commands: commands.map(RedisCommand.init))
    }

    /// Sends every command in one write on one connection and returns each reply in order; see ``pipeline(_:)``.
    public func pipeline(commands: [RedisCommand]) async throws(RedisError) -> [RESPValue] {
        try await pool.lease { (connection) async throws(RedisError) in
            try await connection.send(commands)
        }
    }

    /// Whether the server answers `PING` with `PONG` now (within the timeout); never throws.
    public func ping() async -> Bool {
        (try? await command("PING")) == .simpleString("PONG")
    }

    /// Runs `body` with one connection held for it alone, for `WATCH`/`MULTI`/`EXEC` sequences.
    func withConnection<T, E: Error>(_ body: (RedisConnection) async throws(E) -> T) async throws(E) -> T {
        try await pool.lease(body)
    }
}
