import Synchronization

/// Where a connection connects: one fixed server, or the primary the sentinels name now.
///
/// With Sentinel, the primary last named is remembered until a connection to
/// it fails or it turns out to be a replica (``forget(_:)``); the next connect
/// asks the sentinels again, in order, taking the first that names one. A
/// server named as primary is only used after it confirms with `ROLE`, so a
/// stale answer during a failover never leads to writing to a replica.
final class RedisTarget: Sendable, CustomStringConvertible {
    /// The configured location.
    let location: RedisLocation
    /// Seconds one sentinel may take to answer.
    let timeout: Double
    /// The primary last named by a sentinel; nil until asked, and after ``forget(_:)``.
    private let located = Mutex<RedisURL?>(nil)

    /// How many replicas must confirm a transaction before it counts as written (`WAIT`); 0 waits for none.
    let minimumReplicas: Int
    /// How long a transaction waits for those replicas, in milliseconds.
    static let replicaWaitMilliseconds = 500

    /// Creates a target for `location`; nothing is asked until the first ``resolve()``.
    ///
    /// `minimumReplicas` defaults to 1 with Sentinel (a write the primary alone
    /// holds is lost when it fails over) and 0 for a single server.
    init(_ location: RedisLocation, timeout: Double, minimumReplicas: Int? = nil) {
        self.location = location
        self.timeout = timeout
        switch location {
        case .server: self.minimumReplicas = max(0, minimumReplicas ?? 0)
        case .sentinel: self.minimumReplicas = max(0, minimumReplicas ?? 1)
        }
    }

    /// Whether the server must confirm it is the primary before use.
    var requiresPrimary: Bool {
        if case .sentinel = location { return true }
        return false
    }

    /// The server to connect to now; with Sentinel, asks the sentinels when no primary is known. Blocks the calling queue.
    func resolve() throws(RedisError) -> RedisURL {
        switch location {
        case .server(let url):
            return url
        case .sentinel(let sentinel):
            if let known = located.withLock({ $0 }) { return known }
            let primary = try ask(sentinel)
            located.withLock { $0 = primary }
            return primary
        }
    }

    /// Forgets `url` as the primary (a failed connection, or a replica now), so the next connect asks the sentinels again.
    func forget(_ url: RedisURL) {
        guard requiresPrimary else { return }
        located.withLock { current in
            if current == url { current = nil }
        }
    }

    /// The primary the first answering sentinel names.
    private func ask(_ sentinel: RedisSentinelURL) throws(RedisError) -> RedisURL {
        var reasons: [String] = []
        for address in sentinel.sentinels {
            let connection = RedisConnection(
                url: sentinel.sentinel(address), timeout: timeout, gate: RedisReconnectGate(),
                label: "token-broker.redis.sentinel")
            defer { connection.disconnect() }
            do throws(RedisError) {
                try connection.connectIfNeeded()
                let reply = try connection.exchange([RedisCommand("SENTINEL", "get-master-addr-by-name", sentinel.primaryName)])[0]
                guard let parts = reply.array, parts.count == 2, let host = parts[0].string,
                    let portText = parts[1].string, let port = Int(portText), (1...65535).contains(port)
                else {
                    reasons.append("\(address.endpoint) knows no primary named \(sentinel.primaryName)")
                    continue
                }
                return sentinel.primary(host: host, port: port)
            } catch {
                reasons.append("\(address.endpoint): \(error)")
            }
        }
        throw .unavailable("no sentinel named the primary \(sentinel.primaryName): " + reasons.joined(separator: "; "))
    }

    /// The location, password redacted.
    var description: String { location.description }

    /// What a message calls the server: `host:port`, or the primary's name with Sentinel.
    var endpoint: String {
        switch location {
        case .server(let url): return url.endpoint
        case .sentinel(let sentinel): return "the primary \(sentinel.primaryName)"
        }
    }
}
