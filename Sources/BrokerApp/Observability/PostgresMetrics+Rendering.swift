import BrokerPostgres

extension PostgresMetrics.Snapshot {
    /// Every kind of error `broker_postgres_errors_total` always lists (at 0 until one happens), so a rate over it
    /// is defined from the first scrape; kinds outside it appear once counted.
    static let listedErrorKinds = [
        "connection_lost", "deadline_exceeded", "pool_exhausted", "read_only", "serialization_failure", "server", "server_shutdown",
        "unavailable", "unique_violation",
    ]

    /// The PostgreSQL client's metrics in the Prometheus text format, appended to `/metrics` on PostgreSQL; named
    /// like the Redis client's (`broker_redis_round_trip_seconds`, `broker_redis_pool_waits_total`).
    var prometheusText: String {
        typealias M = MetricsRenderer
        var out = ""
        out += "# HELP broker_postgres_round_trip_seconds Time from sending a statement or pipeline to PostgreSQL to its last reply, "
        out += "a reconnect included.\n"
        out += "# TYPE broker_postgres_round_trip_seconds histogram\n"
        var cumulative: UInt64 = 0
        for (index, bound) in PostgresMetrics.roundTripBounds.enumerated() {
            cumulative += roundTripCounts[index]
            out += "broker_postgres_round_trip_seconds_bucket{le=\"\(bound)\"} \(cumulative)\n"
        }
        cumulative += roundTripCounts[PostgresMetrics.roundTripBounds.count]
        out += "broker_postgres_round_trip_seconds_bucket{le=\"+Inf\"} \(cumulative)\n"
        out += "broker_postgres_round_trip_seconds_sum \(roundTripSeconds)\n"
        out += "broker_postgres_round_trip_seconds_count \(cumulative)\n"
        out += "# HELP broker_postgres_pool_connections Pooled PostgreSQL connections lent to a call now (in_use) or free (idle).\n"
        out += "# TYPE broker_postgres_pool_connections gauge\n"
        out += "broker_postgres_pool_connections{state=\"in_use\"} \(pool.inUse)\n"
        out += "broker_postgres_pool_connections{state=\"idle\"} \(max(0, pool.size - pool.inUse))\n"
        out += M.single(
            "broker_postgres_pool_waits_total", .counter, "PostgreSQL calls that waited for a free pooled connection.", pool.waits)
        out += M.single(
            "broker_postgres_pool_wait_timeouts_total", .counter, "Waits for a pooled PostgreSQL connection that ran out (pool_exhausted).",
            pool.timeouts)
        out += "# HELP broker_postgres_errors_total PostgreSQL calls that failed, by kind of error.\n"
        out += "# TYPE broker_postgres_errors_total counter\n"
        var counted = Dictionary(uniqueKeysWithValues: errors.map { ($0.kind, $0.count) })
        for kind in Self.listedErrorKinds { counted[kind, default: 0] += 0 }
        for (kind, count) in counted.sorted(by: { $0.key < $1.key }) {
            out += "broker_postgres_errors_total{kind=\"\(M.escape(kind))\"} \(count)\n"
        }
        return out
    }
}

extension CachingPostgresAccountRepository {
    /// The replica cache's metrics, named like the Redis cache's (`broker_redis_cache_hits_total`, `…_tracking_up`).
    var prometheusText: String {
        typealias M = MetricsRenderer
        let counts = cache.counts
        var out = ""
        out += M.single("broker_postgres_cache_hits_total", .counter, "Account reads answered from this replica's cache.", counts.hits)
        out += M.single(
            "broker_postgres_cache_misses_total", .counter, "Account reads that asked PostgreSQL while the cache was in use.", counts.misses
        )
        out += M.single(
            "broker_postgres_cache_invalidations_total", .counter, "Cached accounts dropped because a write was notified.",
            counts.invalidations)
        out += M.single(
            "broker_postgres_cache_flushes_total", .counter, "Times the whole cache was dropped (LISTEN session lost, a flush notified).",
            counts.flushes)
        out += M.single("broker_postgres_cache_entries", .gauge, "Accounts (and known absences) in the cache.", counts.entries)
        out += M.single(
            "broker_postgres_listen_up", .gauge, "Whether the LISTEN session is up, so the cache is in use (1) or not (0).",
            cache.isEnabled ? 1 : 0)
        out += M.single("broker_postgres_listen_connects_total", .counter, "Times the LISTEN session was established.", listenerConnects)
        return out
    }
}
