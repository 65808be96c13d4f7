import Synchronization

/// Request counts by route and status class, and a latency histogram per route, for `/metrics`.
///
/// One histogram per route keeps sub-millisecond token reads apart from callbacks that wait
/// seconds on a provider; the route set is the router's, so the label set stays bounded.
public struct HTTPMetricsSnapshot: Sendable {
    /// Route labels; the last one is `"unmatched"` (404s and framing errors).
    public var routes: [String]
    /// `requests[route][c]` counts responses of status class `c + 1` (1xx … 5xx).
    public var requests: [[UInt64]]
    /// Upper bounds of the latency buckets in seconds (the `+Inf` bucket is implied).
    public var latencyBounds: [Double]
    /// `latencyCounts[route]`: non-cumulative counts per bucket, one more entry than `latencyBounds` for `+Inf`.
    public var latencyCounts: [[UInt64]]
    /// `latencySum[route]`: the sum of that route's observed latencies in seconds.
    public var latencySum: [Double]
    /// Connections open now.
    public var openConnections: Int
    /// Connections accepted since start.
    public var acceptedConnections: UInt64
}

/// One worker's share of the counters; only its own queue records into it, so the lock is uncontended.
struct HTTPMetricsShard {
    static let bounds: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    var requests: [UInt64]
    /// Route-major: route `r`'s buckets are `r * (bounds.count + 1) ..< (r + 1) * (bounds.count + 1)`.
    var latencyCounts: [UInt64]
    var latencySums: [Double]
    let routeCount: Int

    init(routeCount: Int) {
        self.routeCount = routeCount
        requests = Array(repeating: 0, count: (routeCount + 1) * 5)
        latencyCounts = Array(repeating: 0, count: (routeCount + 1) * (Self.bounds.count + 1))
        latencySums = Array(repeating: 0, count: routeCount + 1)
    }

    mutating func record(route: Int?, status: Int, seconds: Double) {
        let r = route ?? routeCount
        let c = min(max(status / 100, 1), 5) - 1
        requests[r * 5 + c] &+= 1
        var b = 0
        while b < Self.bounds.count && seconds > Self.bounds[b] { b += 1 }
        latencyCounts[r * (Self.bounds.count + 1) + b] &+= 1
        latencySums[r] += seconds
    }
}

/// One worker's counters for one server, behind a lock: the worker may be shared with other servers and clients.
final class HTTPMetricsCell: Sendable {
    /// The counters.
    let shard: Mutex<HTTPMetricsShard>

    init(routeCount: Int) {
        shard = Mutex(HTTPMetricsShard(routeCount: routeCount))
    }
}
