import Synchronization

/// What a ``PostgresClient`` counts for `/metrics`: how long its round trips take and which errors they end in.
///
/// Every pipeline, statement of a transaction and claim of a pooled connection records here; reading is a
/// ``Snapshot``, which the broker renders with the pool's use beside it.
public final class PostgresMetrics: Sendable {
    /// The upper bounds (seconds) of the round-trip histogram's buckets, as for Redis.
    public static let roundTripBounds: [Double] = [
        0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
    ]

    /// The figures at one moment.
    public struct Snapshot: Sendable, Equatable {
        /// Round trips per bucket of ``PostgresMetrics/roundTripBounds``, the last one past every bound (not cumulative).
        public var roundTripCounts: [UInt64]
        /// The sum of every round trip's seconds.
        public var roundTripSeconds: Double
        /// Errors by ``PostgresError/kind``, sorted by kind.
        public var errors: [(kind: String, count: UInt64)]
        /// How the pool is used now.
        public var pool: PostgresPoolStatistics

        public static func == (a: Snapshot, b: Snapshot) -> Bool {
            a.roundTripCounts == b.roundTripCounts && a.roundTripSeconds == b.roundTripSeconds && a.pool == b.pool
                && a.errors.map(\.kind) == b.errors.map(\.kind) && a.errors.map(\.count) == b.errors.map(\.count)
        }
    }

    private struct State {
        var counts = [UInt64](repeating: 0, count: PostgresMetrics.roundTripBounds.count + 1)
        var seconds = 0.0
        var errors: [String: UInt64] = [:]
    }

    private let state = Mutex(State())

    /// Creates empty figures.
    public init() {}

    /// Records one round trip of `seconds` that ended in `error` (nil for success).
    func record(seconds: Double, error: PostgresError?) {
        let bucket = Self.roundTripBounds.firstIndex { seconds <= $0 } ?? Self.roundTripBounds.count
        state.withLock { state in
            state.counts[bucket] &+= 1
            state.seconds += max(0, seconds)
            if let error { state.errors[error.kind, default: 0] &+= 1 }
        }
    }

    /// Records an error that ended a call before any round trip (no pooled connection came free in time).
    func record(_ error: PostgresError) {
        state.withLock { $0.errors[error.kind, default: 0] &+= 1 }
    }

    /// The figures now, with `pool`'s use.
    func snapshot(pool: PostgresPoolStatistics) -> Snapshot {
        state.withLock { state in
            Snapshot(
                roundTripCounts: state.counts, roundTripSeconds: state.seconds,
                errors: state.errors.sorted { $0.key < $1.key }.map { (kind: $0.key, count: $0.value) }, pool: pool)
        }
    }
}

extension PostgresError {
    /// The error's kind as `/metrics` labels it: `connection_lost`, `deadline_exceeded`, `unique_violation`, ….
    public var kind: String {
        switch self {
        case .unavailable: return "unavailable"
        case .connectionLost: return "connection_lost"
        case .authenticationFailed, .authenticationRefused: return "authentication"
        case .deadlineExceeded: return "deadline_exceeded"
        case .cancelled: return "cancelled"
        case .poolExhausted: return "pool_exhausted"
        case .uniqueViolation: return "unique_violation"
        case .serializationFailure: return "serialization_failure"
        case .readOnly: return "read_only"
        case .serverShutdown: return "server_shutdown"
        case .queryCancelled: return "query_cancelled"
        case .server: return "server"
        case .protocolError: return "protocol"
        case .configuration: return "configuration"
        }
    }
}
