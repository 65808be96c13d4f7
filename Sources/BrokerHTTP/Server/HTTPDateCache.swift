import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The `Date` header value (RFC 9110 §5.6.7 IMF-fixdate), formatted once per second.
final class HTTPDateCache: Sendable {
    /// The process-wide cache.
    static let shared = HTTPDateCache()

    private let state = Mutex<(second: Int, bytes: [UInt8])>((-1, []))

    /// The current date as `Sun, 06 Nov 1994 08:49:37 GMT` bytes.
    func current() -> [UInt8] {
        let now = time(nil)
        return state.withLock { cached in
            if cached.second != now {
                cached = (now, Self.format(now))
            }
            return cached.bytes
        }
    }

    static func format(_ seconds: time_t) -> [UInt8] {
        var t = seconds
        var parts = tm()
        gmtime_r(&t, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let text =
            "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
        return Array(text.utf8)
    }
}
