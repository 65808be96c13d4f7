import Synchronization

/// Counters of one Redis client and its cache, for `/metrics`; updated with relaxed atomics, read as a ``Snapshot``.
///
/// Round trips are the time from writing a command (or pipeline) to reading its
/// last reply, on the connection's own queue; pool waits are leases that found
/// every connection taken. Cache counters stay zero when the cache is off.
public final class RedisMetrics: Sendable {
    /// Upper bounds of the round-trip histogram buckets, in seconds (the last bucket is `+Inf`).
    public static let roundTripBounds: [Double] = [
        0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
    ]

    /// Non-cumulative bucket counts and the sum in nanoseconds; one lock, taken once per round trip.
    private let roundTrips = Mutex<(counts: [UInt64], nanoseconds: UInt64)>(([UInt64](repeating: 0, count: roundTripBounds.count + 1), 0))
    private let poolWaitCount = Atomic<UInt64>(0)
    private let poolWaitNanoseconds = Atomic<UInt64>(0)
    private let connectCount = Atomic<UInt64>(0)
    private let connectFailureCount = Atomic<UInt64>(0)
    private let hitCount = Atomic<UInt64>(0)
    private let missCount = Atomic<UInt64>(0)
    private let invalidationCount = Atomic<UInt64>(0)
    private let flushCount = Atomic<UInt64>(0)
    private let trackingConnectCount = Atomic<UInt64>(0)
    private let trackingUp = Atomic<Bool>(false)
    private let entryCount = Atomic<Int>(0)
    private let unreplicatedCount = Atomic<UInt64>(0)

    /// Creates zeroed counters.
    public init() {}

    /// The values at one moment (each read on its own, so totals may be a few events apart).
    public struct Snapshot: Sendable, Equatable {
        /// Non-cumulative round-trip counts per bucket, one more than ``RedisMetrics/roundTripBounds`` for `+Inf`.
        public var roundTripCounts: [UInt64]
        /// The sum of all round trips, in seconds.
        public var roundTripSeconds: Double
        /// Leases that had to wait for a free connection.
        public var poolWaits: UInt64
        /// The time those leases waited, in seconds.
        public var poolWaitSeconds: Double
        /// Connections opened (first connects and reconnects), handshake included.
        public var connects: UInt64
        /// Connect attempts that failed.
        public var connectFailures: UInt64
        /// Account reads answered from the cache.
        public var cacheHits: UInt64
        /// Account reads that asked Redis while the cache was on.
        public var cacheMisses: UInt64
        /// Cached keys Redis told this replica to drop.
        public var invalidations: UInt64
        /// Times the whole cache was dropped (tracking lost or re-established, or Redis flushed).
        public var cacheFlushes: UInt64
        /// Times the invalidation connection was (re)established.
        public var trackingConnects: UInt64
        /// Whether the invalidation connection is up, so the cache is in use.
        public var trackingUp: Bool
        /// Accounts (and known absences) in the cache now.
        public var cacheEntries: Int
        /// Writes refused because too few replicas confirmed them in time (see `BROKER_REDIS_MIN_REPLICAS`).
        public var unreplicatedWrites: UInt64
    }

    /// The current values.
    public func snapshot() -> Snapshot {
        let (counts, nanoseconds) = roundTrips.withLock { $0 }
        return Snapshot(
            roundTripCounts: counts,
            roundTripSeconds: Double(nanoseconds) / 1e9,
            poolWaits: poolWaitCount.load(ordering: .relaxed),
            poolWaitSeconds: Double(poolWaitNanoseconds.load(ordering: .relaxed)) / 1e9,
            connects: connectCount.load(ordering: .relaxed),
            connectFailures: connectFailureCount.load(ordering: .relaxed),
            cacheHits: hitCount.load(ordering: .relaxed),
            cacheMisses: missCount.load(ordering: .relaxed),
            invalidations: invalidationCount.load(ordering: .relaxed),
            cacheFlushes: flushCount.load(ordering: .relaxed),
            trackingConnects: trackingConnectCount.load(ordering: .relaxed),
            trackingUp: trackingUp.load(ordering: .relaxed),
            cacheEntries: entryCount.load(ordering: .relaxed),
            unreplicatedWrites: unreplicatedCount.load(ordering: .relaxed))
    }

    func recordRoundTrip(nanoseconds: UInt64) {
        let seconds = Double(nanoseconds) / 1e9
        let bucket = Self.roundTripBounds.firstIndex { seconds <= $0 } ?? Self.roundTripBounds.count
        roundTrips.withLock { histogram in
            histogram.counts[bucket] += 1
            histogram.nanoseconds += nanoseconds
        }
    }

    func recordPoolWait(nanoseconds: UInt64) {
        poolWaitCount.add(1, ordering: .relaxed)
        poolWaitNanoseconds.add(nanoseconds, ordering: .relaxed)
    }

    func recordConnect(succeeded: Bool) {
        if succeeded {
            connectCount.add(1, ordering: .relaxed)
        } else {
            connectFailureCount.add(1, ordering: .relaxed)
        }
    }

    func recordHit() { hitCount.add(1, ordering: .relaxed) }
    func recordMiss() { missCount.add(1, ordering: .relaxed) }
    func recordInvalidations(_ count: Int) { invalidationCount.add(UInt64(count), ordering: .relaxed) }
    func recordFlush() { flushCount.add(1, ordering: .relaxed) }
    func recordTracking(up: Bool) {
        if up { trackingConnectCount.add(1, ordering: .relaxed) }
        trackingUp.store(up, ordering: .relaxed)
    }
    func setEntries(_ count: Int) { entryCount.store(count, ordering: .relaxed) }
    func recordUnreplicatedWrite() { unreplicatedCount.add(1, ordering: .relaxed) }
}
