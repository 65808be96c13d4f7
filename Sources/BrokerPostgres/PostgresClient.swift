import BrokerTLS

/// A PostgreSQL client: a bounded pool of sessions speaking protocol 3.0, for statements with parameters.
///
/// ```swift
/// let client = try PostgresClient(url: "postgres://broker:secret@db1:5432,db2:5432/broker?target_session_attrs=read-write")
/// let rows = try await client.query("SELECT uid FROM accounts WHERE provider = $1", [.text("github")])
/// ```
///
/// Every call has a deadline (the configuration's `statementTimeout` unless given) that covers the wait for a
/// pooled connection, a reconnect and the statement; a statement still running at the deadline is cancelled
/// with a CancelRequest. Errors are ``PostgresError``s, typed by SQLSTATE.
public final class PostgresClient: Sendable {
    /// Hosts, login and limits.
    public let configuration: PostgresConfiguration
    let pool: PostgresConnectionPool

    /// Creates a client; nothing connects until the first statement. With TLS, the CA file and client certificate
    /// are read now, so a missing or unreadable file is a configuration error, not a failure at the first statement.
    public init(configuration: PostgresConfiguration) throws(PostgresError) {
        guard !configuration.endpoints.isEmpty else { throw .configuration("no host to connect to") }
        self.configuration = configuration
        self.pool = PostgresConnectionPool(configuration: configuration, tls: try Self.tlsContext(configuration))
    }

    /// The TLS settings every connection of the pool shares, or nil for `sslmode=disable`.
    static func tlsContext(_ configuration: PostgresConfiguration) throws(PostgresError) -> TLSContext? {
        guard configuration.sslMode.usesTLS else { return nil }
        var client: TLSContext.ClientCertificate?
        switch (configuration.sslCert, configuration.sslKey) {
        case (nil, nil): client = nil
        case (let certificate?, let key?): client = TLSContext.ClientCertificate(certificateFile: certificate, keyFile: key)
        default: throw .configuration("sslcert and sslkey go together: give both or neither")
        }
        do throws(TLSError) {
            return try TLSContext(caFile: configuration.sslRootCert, clientCertificate: client)
        } catch {
            switch error {
            case .caFile(let reason): throw .configuration("sslrootcert \(configuration.sslRootCert ?? ""): \(reason)")
            default: throw .configuration("TLS: \(error.reason)")
            }
        }
    }

    /// Creates a client from a `postgres://` or `postgresql://` URL.
    public convenience init(url: String) throws(PostgresError) {
        try self.init(configuration: PostgresConfiguration.parse(url))
    }

    /// Runs one statement with `parameters` and returns its rows.
    public func query(_ sql: String, _ parameters: [PostgresValue] = [], timeout: Double? = nil) async throws(PostgresError) -> PostgresRows
    {
        let results = try await pipeline([PostgresQuery(sql, parameters)], timeout: timeout)
        return results[0]
    }

    /// Runs `queries` in one round trip (one Sync) and one implicit transaction: all take effect or, at the first
    /// error, none does, and that error is thrown.
    public func pipeline(_ queries: [PostgresQuery], timeout: Double? = nil) async throws(PostgresError) -> [PostgresRows] {
        let deadline = PostgresSocket.deadline(in: timeout ?? configuration.statementTimeout)
        return try await pool.lease(deadline: deadline) { (connection) async throws(PostgresError) in
            try await connection.run(queries, deadline: deadline)
        }
    }

    /// Runs `segments` in one round trip with a Sync after each, so each is a transaction of its own (see
    /// ``PostgresConnection/run(segments:deadline:)``), and returns each one's rows; the first error is thrown.
    public func pipeline(segments: [[PostgresQuery]], timeout: Double? = nil) async throws(PostgresError) -> [[PostgresRows]] {
        let deadline = PostgresSocket.deadline(in: timeout ?? configuration.statementTimeout)
        return try await pool.lease(deadline: deadline) { (connection) async throws(PostgresError) in
            try await connection.run(segments: segments, deadline: deadline)
        }
    }

    /// Runs `body` with one pooled connection held, for statements that must share a session (an explicit
    /// transaction, an advisory lock); the wait for the connection ends at `timeout` seconds.
    public func withConnection<T>(
        timeout: Double? = nil, _ body: (PostgresConnection) async throws(PostgresError) -> T
    ) async throws(PostgresError) -> T {
        let deadline = PostgresSocket.deadline(in: timeout ?? configuration.statementTimeout)
        return try await pool.lease(deadline: deadline, body)
    }

    /// How the pool is used.
    public var poolStatistics: PostgresPoolStatistics { pool.statistics }

    /// Round trips, errors by kind and the pool's use, for `/metrics`.
    public var metrics: PostgresMetrics.Snapshot { pool.metrics.snapshot(pool: pool.statistics) }

    /// Ends every idle session (Terminate); call when done with the client.
    public func close() async {
        for connection in pool.connections { await connection.close() }
    }
}

extension PostgresConnection {
    /// Runs one statement before `timeout` seconds from now.
    public func query(_ sql: String, _ parameters: [PostgresValue] = [], timeout: Double? = nil) async throws(PostgresError) -> PostgresRows
    {
        let deadline = PostgresSocket.deadline(in: timeout ?? configuration.statementTimeout)
        return try await run([PostgresQuery(sql, parameters)], deadline: deadline)[0]
    }
}
