import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The socket calls a PostgreSQL connection needs: connect with a deadline, wait with poll(2), read, write, close.
///
/// The same approach as the Redis client's socket: non-blocking descriptors, and every wait a poll(2) bounded
/// by an absolute deadline on the monotonic clock (nanoseconds), so no call outlives its deadline.
enum PostgresSocket {
    /// Opens a TCP connection to `endpoint` before `deadline`, trying each resolved address in turn.
    static func open(_ endpoint: PostgresConfiguration.Endpoint, deadline: UInt64) throws(PostgresError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var result: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(endpoint.host, String(endpoint.port), &hints, &result)
        guard rc == 0, let first = result else {
            throw .unavailable("cannot resolve \(endpoint.host): \(String(cString: gai_strerror(rc)))")
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
            if let failure = finishConnect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen, deadline: deadline) {
                close(fd)
                reason = failure
                continue
            }
            var on: Int32 = 1
            // A pipeline goes out in one write; Nagle would only delay its last segment.
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
            setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, socklen_t(MemoryLayout<Int32>.size))
            return fd
        }
        throw .unavailable("connect to \(endpoint): \(reason)")
    }

    private static func finishConnect(
        _ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t, deadline: UInt64
    ) -> String? {
        if connect(fd, address, length) == 0 { return nil }
        guard errno == EINPROGRESS || errno == EINTR else { return errorText(errno) }
        switch wait(fd, events: Int16(POLLOUT), deadline: deadline) {
        case .ready:
            var code: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &size) == 0 else { return errorText(errno) }
            return code == 0 ? nil : errorText(code)
        case .timedOut, .woken:
            return "timed out"
        case .failed(let code):
            return errorText(code)
        }
    }

    /// What a bounded wait on one socket found.
    enum WaitResult: Equatable {
        case ready(Int16)
        case timedOut
        case failed(Int32)
        /// `wake` became readable (its bytes were drained): the waiting task was cancelled.
        case woken
    }

    /// Waits until `fd` has one of `events` (or a hang-up or error), `wake` is readable, or `deadline` passes.
    static func wait(_ fd: Int32, events: Int16, deadline: UInt64, wake: Int32 = -1) -> WaitResult {
        while true {
            let current = now()
            guard current < deadline else { return .timedOut }
            // Round up so a wait never ends early; poll(2) takes milliseconds.
            let millis = Int32(min((deadline - current + 999_999) / 1_000_000, UInt64(Int32.max)))
            // On the stack: a wait runs twice per round trip, an array would be a heap allocation each time.
            var descriptors = (pollfd(fd: fd, events: events, revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0))
            let rc = withUnsafeMutableBytes(of: &descriptors) { raw in
                poll(raw.baseAddress!.assumingMemoryBound(to: pollfd.self), wake >= 0 ? 2 : 1, millis)
            }
            if rc > 0 {
                if wake >= 0, descriptors.1.revents != 0 {
                    drain(wake)
                    return .woken
                }
                return .ready(descriptors.0.revents)
            }
            if rc < 0 && errno != EINTR { return .failed(errno) }
        }
    }

    /// Reads a non-blocking pipe until it is empty.
    static func drain(_ fd: Int32) {
        var scratch: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
        while withUnsafeMutableBytes(of: &scratch, { read(fd, $0.baseAddress, $0.count) }) > 0 {}
    }

    /// Writes all of `bytes` before `deadline`.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8], deadline: UInt64, endpoint: String) throws(PostgresError) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { raw in
                // MSG_NOSIGNAL: a peer that closed must give EPIPE here, not kill the process with SIGPIPE.
                send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if count > 0 {
                offset += count
                continue
            }
            let code = errno
            guard count < 0, code == EAGAIN || code == EWOULDBLOCK || code == EINTR else {
                throw .connectionLost("write to \(endpoint): \(errorText(code))")
            }
            switch wait(fd, events: Int16(POLLOUT), deadline: deadline) {
            case .ready: continue
            case .timedOut, .woken: throw .deadlineExceeded(cancelled: false)
            case .failed(let code): throw .connectionLost("poll on \(endpoint): \(errorText(code))")
            }
        }
    }

    /// Whether an idle connection has anything to read or has hung up: before LISTEN is used, an idle server
    /// sends nothing unasked except when it ends the session (a terminated backend, a shutdown).
    static func idleConnectionIsStale(_ fd: Int32) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) != 0
    }

    /// The monotonic clock deadlines are measured on, in nanoseconds.
    @Sendable static func now() -> UInt64 {
        DispatchTime.now().uptimeNanoseconds
    }

    /// A deadline `seconds` from now, saturating.
    static func deadline(in seconds: Double) -> UInt64 {
        let nanoseconds = seconds <= 0 ? 0 : min(seconds * 1_000_000_000, Double(UInt64.max / 4))
        return now() &+ UInt64(nanoseconds)
    }

    /// The system's text for `code`, such as `Connection refused`.
    static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
