#if canImport(Glibc)
import Glibc
#endif

/// `token-broker healthcheck`: asks the configured port for `/healthz` and answers by exit code,
/// so a container HEALTHCHECK needs no curl.
public enum HealthCheck {
    /// Returns 0 when `/healthz` answered 200 within `timeout` seconds, else 1.
    public static func run(configuration: BrokerConfiguration, timeout: Int = 3) -> Int32 {
        check(configuration: configuration, timeout: timeout).status
    }

    /// The exit status and, when it is 1, why: the address, the connection, or what `/healthz` answered.
    public static func check(configuration: BrokerConfiguration, timeout: Int = 3) -> (status: Int32, reason: String?) {
        let host: String
        switch configuration.server.host {
        case "0.0.0.0": host = "127.0.0.1"
        case "::": host = "::1"
        default: host = configuration.server.host
        }
        let target = "\(host.contains(":") ? "[\(host)]" : host):\(configuration.server.port)"
        var hints = addrinfo()
        hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(configuration.server.port), &hints, &result) == 0, let info = result else {
            return (1, "BROKER_HOST \"\(configuration.server.host)\" is not a numeric address to connect to")
        }
        defer { freeaddrinfo(result) }
        let fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return (1, "socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var tv = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        guard connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
            return (1, "cannot connect to \(target): \(String(cString: strerror(errno))) (is the broker running on BROKER_PORT?)")
        }
        let request = "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
        guard send(fd, request, request.utf8.count, Int32(MSG_NOSIGNAL)) == request.utf8.count else {
            return (1, "cannot send to \(target): \(String(cString: strerror(errno)))")
        }
        var buffer = [UInt8](repeating: 0, count: 512)
        var received = 0
        while received < 12 {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + received, $0.count - received, 0) }
            guard n > 0 else { break }
            received += n
        }
        if received >= 12 && buffer[0..<12].elementsEqual("HTTP/1.1 200".utf8) { return (0, nil) }
        guard received > 0 else { return (1, "\(target) sent no answer within \(timeout) s") }
        let line = buffer[0..<received].prefix { $0 != 0x0D && $0 != 0x0A }
        let shown = String(decoding: line.prefix(64), as: UTF8.self)
        return (1, "/healthz on \(target) answered \"\(shown)\", not 200")
    }
}
