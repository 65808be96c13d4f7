#if canImport(Glibc)
import Glibc
#endif

/// `token-broker healthcheck`: asks the configured port for `/healthz` and answers by exit code,
/// so a container HEALTHCHECK needs no curl.
public enum HealthCheck {
    /// Returns 0 when `/healthz` answered 200 within `timeout` seconds, else 1.
    public static func run(configuration: BrokerConfiguration, timeout: Int = 3) -> Int32 {
        let host: String
        switch configuration.server.host {
        case "0.0.0.0": host = "127.0.0.1"
        case "::": host = "::1"
        default: host = configuration.server.host
        }
        var hints = addrinfo()
        hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(configuration.server.port), &hints, &result) == 0, let info = result else { return 1 }
        defer { freeaddrinfo(result) }
        let fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return 1 }
        defer { close(fd) }
        var tv = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        guard connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else { return 1 }
        let request = "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
        guard send(fd, request, request.utf8.count, Int32(MSG_NOSIGNAL)) == request.utf8.count else { return 1 }
        var buffer = [UInt8](repeating: 0, count: 512)
        var received = 0
        while received < 12 {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + received, $0.count - received, 0) }
            guard n > 0 else { break }
            received += n
        }
        return received >= 12 && buffer[0..<12].elementsEqual("HTTP/1.1 200".utf8) ? 0 : 1
    }
}
