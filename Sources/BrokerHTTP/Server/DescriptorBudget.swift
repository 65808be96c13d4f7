#if canImport(Glibc)
import Glibc
#endif

/// How many connections the process's open-file limit (`RLIMIT_NOFILE`) leaves room for.
///
/// Every connection holds a descriptor, and so do the files, the store's journals, Redis connections and outbound
/// calls. A cap above what the descriptors allow is never reached: `accept` fails with `EMFILE` first, and the
/// over-cap eviction that keeps the server reachable never runs. So the cap is kept below the limit, leaving a
/// ``reserve`` for the rest; past the cap the server sheds the connections that wait longest on their clients.
public struct DescriptorBudget: Sendable, Equatable {
    /// The soft open-file limit the budget is drawn from.
    public let limit: Int
    /// Descriptors kept for everything but the server's connections.
    public let reserve: Int
    /// The most connections the server may hold open, evictions still closing included.
    public let connections: Int

    /// The budget under a soft limit of `limit` descriptors, with `extraReserve` more kept for other listeners.
    ///
    /// The reserve is 64 plus a sixteenth of the limit (128 of 1,024): the process's own files and a share of
    /// outbound calls that grows with the traffic the limit admits. The server may run ahead of the cap by the
    /// connections it chose to evict but has not closed yet (``HTTPServerConfiguration/evictionSlack(cap:)``),
    /// so the cap leaves room for those too.
    public init(limit: Int, extraReserve: Int = 0) {
        self.limit = limit
        // An unlimited soft limit reads as Int.max: the arithmetic below works on a bound no process reaches.
        let bounded = min(limit, 1 << 30)
        reserve = 64 + bounded / 16 + extraReserve
        let available = bounded - reserve
        var cap = available * 8 / 9
        while cap > 1 && cap + HTTPServerConfiguration.evictionSlack(cap: cap) > available { cap -= 1 }
        connections = max(1, cap)
    }

    /// The soft and hard open-file limits now; `Int.max` for unlimited.
    public static func currentLimits() -> (soft: Int, hard: Int) {
        var limits = rlimit()
        guard getrlimit(Self.resource, &limits) == 0 else { return (1024, 1024) }
        return (Self.count(limits.rlim_cur), Self.count(limits.rlim_max))
    }

    /// Raises the soft open-file limit to the hard one (no privilege needed) and returns the soft limit in force.
    ///
    /// Linux refuses a limit above `fs.nr_open` even when the hard limit is unlimited, so that is the ceiling then.
    @discardableResult
    public static func raiseSoftLimit() -> Int {
        var limits = rlimit()
        guard getrlimit(Self.resource, &limits) == 0 else { return currentLimits().soft }
        var target = limits.rlim_max
        if target == Self.unlimited { target = rlim_t(Self.kernelMaximum() ?? 1_048_576) }
        if limits.rlim_cur < target {
            var raised = limits
            raised.rlim_cur = target
            _ = setrlimit(Self.resource, &raised)
        }
        return currentLimits().soft
    }

    /// `RLIM_INFINITY` (all bits set), which Swift cannot import from its C definition `((rlim_t) -1)`.
    private static let unlimited = rlim_t.max

    private static var resource: __rlimit_resource_t { __rlimit_resource_t(UInt32(RLIMIT_NOFILE.rawValue)) }

    private static func count(_ value: rlim_t) -> Int {
        value == Self.unlimited || value > rlim_t(Int.max) ? Int.max : Int(value)
    }

    /// `/proc/sys/fs/nr_open`: the most descriptors one process may be allowed.
    private static func kernelMaximum() -> Int? {
        let fd = open("/proc/sys/fs/nr_open", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 32)
        let n = read(fd, &bytes, bytes.count)
        guard n > 0 else { return nil }
        var value = 0
        for byte in bytes[0..<n] {
            guard (0x30...0x39).contains(byte) else { break }
            value = value * 10 + Int(byte - 0x30)
        }
        return value > 0 ? value : nil
    }
}
