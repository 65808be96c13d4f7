import BrokerRedis

extension RedisMetrics.Snapshot {
    /// The Redis client's and cache's metrics in the Prometheus text format, appended to `/metrics` on Redis.
    var prometheusText: String {
        var out = ""
        out += "# HELP broker_redis_round_trip_seconds Time from writing a command or pipeline to Redis to reading its last reply.\n"
        out += "# TYPE broker_redis_round_trip_seconds histogram\n"
        var cumulative: UInt64 = 0
        for (index, bound) in RedisMetrics.roundTripBounds.enumerated() {
            cumulative += roundTripCounts[index]
            out += "broker_redis_round_trip_seconds_bucket{le=\"\(bound)\"} \(cumulative)\n"
        }
        cumulative += roundTripCounts[RedisMetrics.roundTripBounds.count]
        out += "broker_redis_round_trip_seconds_bucket{le=\"+Inf\"} \(cumulative)\n"
        out += "broker_redis_round_trip_seconds_sum \(roundTripSeconds)\n"
        out += "broker_redis_round_trip_seconds_count \(cumulative)\n"
        typealias M = MetricsRenderer
        out += M.single("broker_redis_pool_waits_total", .counter, "Redis calls that waited for a free pooled connection.", poolWaits)
        out += M.single(
            "broker_redis_pool_wait_seconds_total", .counter, "Time Redis calls waited for a free pooled connection.", poolWaitSeconds)
        out += M.single("broker_redis_connects_total", .counter, "Connections to Redis opened, reconnects included.", connects)
        out += M.single("broker_redis_connect_failures_total", .counter, "Connection attempts to Redis that failed.", connectFailures)
        out += M.single("broker_redis_cache_hits_total", .counter, "Account reads answered from this replica's cache.", cacheHits)
        out += M.single(
            "broker_redis_cache_misses_total", .counter, "Account reads that asked Redis while the cache was in use.", cacheMisses)
        out += M.single(
            "broker_redis_cache_invalidations_total", .counter, "Cached accounts dropped because Redis reported a write.", invalidations)
        out += M.single(
            "broker_redis_cache_flushes_total", .counter,
            "Times the whole cache was dropped (tracking lost or re-established, Redis flushed).", cacheFlushes)
        out += M.single("broker_redis_cache_entries", .gauge, "Accounts (and known absences) in the cache.", cacheEntries)
        out += M.single(
            "broker_redis_tracking_up", .gauge, "Whether the invalidation connection is subscribed, so the cache is in use (1) or not (0).",
            trackingUp ? 1 : 0)
        out += M.single(
            "broker_redis_tracking_connects_total", .counter, "Times the invalidation connection was established.", trackingConnects)
        out += M.single(
            "broker_redis_unreplicated_writes_total", .counter, "Writes not acknowledged because too few replicas confirmed them in time.",
            unreplicatedWrites)
        return out
    }
}
