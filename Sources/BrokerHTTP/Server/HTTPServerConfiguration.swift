/// Everything the HTTP server needs to know before it listens: address, limits and deadlines.
public struct HTTPServerConfiguration: Sendable {
    /// Numeric address to bind: `127.0.0.1`, `0.0.0.0`, `::` or `::1`.
    public var host: String
    /// TCP port; 0 asks the kernel for a free one (read it back from `HTTPServer.port`).
    public var port: Int
    /// Listen backlog.
    public var backlog: Int32
    /// Most connections open at once; past it, the connections waiting longest on their clients (idle keep-alive ones
    /// first among them) are closed to make room. Keep it within the open-file limit (``DescriptorBudget``).
    public var maxConnections: Int
    /// Size limits the parser enforces.
    public var limits: HTTPParserLimits
    /// Total time allowed for a request's head, from its first byte (408 and close after).
    public var headerTimeout: Double
    /// Total time allowed for a request's body once its head is complete (408 and close after).
    public var bodyTimeout: Double
    /// Time allowed for a response to drain to a slow reader before the connection is dropped.
    public var writeTimeout: Double
    /// How long an idle keep-alive connection is kept; should exceed a fronting load balancer's.
    public var idleTimeout: Double
    /// Number of serial queues the connections are spread over (0: one per core).
    public var workerCount: Int

    /// Creates a configuration; the defaults are the service's defaults.
    public init(
        host: String = "127.0.0.1", port: Int = 8080, backlog: Int32 = 1024,
        maxConnections: Int = 10_000, limits: HTTPParserLimits = HTTPParserLimits(),
        headerTimeout: Double = 10, bodyTimeout: Double = 30, writeTimeout: Double = 30,
        idleTimeout: Double = 75, workerCount: Int = 0
    ) {
        self.host = host
        self.port = port
        self.backlog = backlog
        self.maxConnections = maxConnections
        self.limits = limits
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
        self.writeTimeout = writeTimeout
        self.idleTimeout = idleTimeout
        self.workerCount = workerCount
    }

    /// How far past `cap` open connections may run while the ones chosen to make room are still closing: an eighth
    /// of the cap, at least 16. Past it the server stops accepting for a moment.
    public static func evictionSlack(cap: Int) -> Int { max(16, cap / 8) }
}
