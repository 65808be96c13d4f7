import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The socket calls a Redis connection needs: connect with a deadline, wait with poll(2), close.
///
/// Sockets are non-blocking; every wait is a poll(2) bounded by an absolute
/// deadline on the monotonic clock (nanoseconds), so no call outlives its timeout.
enum RedisSocket {
    /// Opens a TCP connection to `host:port` before `deadline`, trying each resolved address in turn.
    ///
    /// Throws ``RedisError/unavailable(_:)`` naming the endpoint and the system's reason.
    static func open(host: String, port: Int, deadline: UInt64, now: () -> UInt64) throws(RedisError) -> Int32 {
        let endpoint = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var result: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &result)
        guard rc == 0, let first = result else {
            throw .unavailable("cannot resolve \(host): \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(result) }
        var reason = "no address"
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let info = next {
            next = info.pointee.ai_next
            let fd = socket(
                info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else {
                reason = errorText(errno)
                continue
            }
            if let failure = finishConnect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen, deadline: deadline, now: now) {
                close(fd)
                reason = failure
                continue
            }
            var on: Int32 = 1
            // Pipelined commands go out in one write; Nagle would only delay the last segment.
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
            setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, socklen_t(MemoryLayout<Int32>.size))
            return fd
        }
        throw .unavailable("connect to \(endpoint): \(reason)")
    }

    /// Connects `fd` to `address`, waiting for completion until `deadline`; nil on success, else the reason.
    private static func finishConnect(
        _ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t, deadline: UInt64, now: () -> UInt64
    ) -> String? {
        if connect(fd, address, length) == 0 { return nil }
        guard errno == EINPROGRESS || errno == EINTR else { return errorText(errno) }
        switch wait(fd, events: Int16(POLLOUT), deadline: deadline, now: now) {
        case .ready:
            var code: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &size) == 0 else { return errorText(errno) }
            return code == 0 ? nil : errorText(code)
        case .timedOut:
            return "timed out"
        case .failed(let code):
            return errorText(code)
        }
    }

    /// What a bounded wait on one socket found.
    enum WaitResult: Equatable {
        /// These poll(2) events (including POLLHUP or POLLERR) are pending.
        case ready(Int16)
        /// The deadline passed first.
        case timedOut
        /// poll(2) failed with this errno.
        case failed(Int32)
    }

    /// Waits until `fd` has one of `events` (or a hang-up or error) or `deadline` passes.
    static func wait(_ fd: Int32, events: Int16, deadline: UInt64, now: () -> UInt64) -> WaitResult {
        while true {
            let current = now()
            guard current < deadline else { return .timedOut }
            // Round up so a wait never ends early; poll(2) takes milliseconds.
            let millis = Int32(min((deadline - current + 999_999) / 1_000_000, UInt64(Int32.max)))
            var descriptor = pollfd(fd: fd, events: events, revents: 0)
            let rc = poll(&descriptor, 1, millis)
            if rc > 0 { return .ready(descriptor.revents) }
            if rc < 0 && errno != EINTR { return .failed(errno) }
        }
    }

    /// Whether an idle connection has anything to read or has hung up: Redis sends nothing unasked,
    /// so either means the server closed it (a restart, an idle `timeout`) or the stream is out of step.
    static func idleConnectionIsStale(_ fd: Int32) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) != 0
    }

    /// The monotonic clock socket deadlines are measured on, in nanoseconds.
    @Sendable static func monotonicNow() -> UInt64 {
        DispatchTime.now().uptimeNanoseconds
    }

    /// The system's text for `code`, such as `Connection refused`.
    static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
