#if canImport(Glibc)
import Glibc
#endif

extension HTTPConnection {
    /// Monotonic nanoseconds since the connection began waiting on its client, or nil while the server works on it.
    ///
    /// Waiting means: idle between requests, a head or body still arriving, a response
    /// not being read, or a lingering close. Read from the accept queue; the deadline and
    /// its kind are two atomics, so a torn pair only skews the choice of one victim.
    var waitingSince: UInt64? {
        let at = deadline.load(ordering: .relaxed)
        guard at != 0, !evictionPending.load(ordering: .relaxed) else { return nil }
        let c = server.configuration
        let allowed: Double
        switch DeadlineKind(rawValue: deadlineKind.load(ordering: .relaxed)) ?? .none {
        case .none: return nil
        case .idle: allowed = c.idleTimeout
        case .header: allowed = c.headerTimeout
        case .body: allowed = c.bodyTimeout
        case .write: allowed = c.writeTimeout
        case .linger: allowed = 2
        }
        return at &- UInt64(max(allowed, 0) * 1e9)
    }

    /// Closes the connection to make room for a new one, unless it moved on since it was chosen.
    ///
    /// Catalogue items 21, 22 and 49: at the connection cap a slow client (a head or
    /// body dripping in) answers for the room, not the next client, so health probes
    /// keep getting through. A request still arriving gets `503 over_capacity` and a
    /// close; an idle, unread or lingering connection is just closed. Runs on the worker queue.
    func evict(chosenWithDeadline expected: UInt64) {
        defer { evictionPending.store(false, ordering: .relaxed) }
        guard phase != .closed, deadline.load(ordering: .relaxed) == expected else { return }
        switch DeadlineKind(rawValue: deadlineKind.load(ordering: .relaxed)) ?? .none {
        case .header, .body:
            clearDeadline()
            let response = Response.error(.serviceUnavailable, code: "over_capacity",
                                          message: "The server is at its connection limit and this request was too slow.")
            encodeTimeout(response, method: head?.method.rawValue ?? "-", path: head?.path ?? "-")
        case .idle, .write, .linger:
            close()
        case .none:
            return
        }
    }
}
