import Glibc

/// The loopback interface as tests use it: a free port, a socket address.
public enum Loopback {
    /// A port nothing listens on right now: bind 127.0.0.1:0, read the port back, close.
    public static func freePort() throws -> Int {
        let (fd, port) = try boundSocket()
        close(fd)
        return port
    }

    /// A free port below the kernel's ephemeral range (`net.ipv4.ip_local_port_range`), for a test that binds the same
    /// port again and again: no outgoing connection is given it meanwhile, and ``freePort()`` never hands it out (a port
    /// of that range was seen taken by another test's client between two binds of a full parallel run).
    public static func freePortOutsideEphemeralRange() throws -> Int {
        var low = 32768
        if let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8),
            let first = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first, let value = Int(first)
        {
            low = value
        }
        guard low > 10_001 else { return try freePort() }
        for _ in 0..<200 {
            let port = Int.random(in: 10_000..<low)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw LoopbackError("socket failed: errno \(errno)") }
            var address = Self.address(port: port)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            close(fd)
            if bound == 0 { return port }
        }
        throw LoopbackError("no free port below \(low) in 200 tries")
    }

    /// A port that refuses connections for as long as `body` runs: bound, never listening,
    /// so no other test's listener can take it meanwhile (as it could a ``freePort()``).
    public static func withRefusingPort<T>(_ body: (Int) async throws -> T) async throws -> T {
        let (fd, port) = try boundSocket()
        defer { close(fd) }
        return try await body(port)
    }

    /// A TCP socket bound to 127.0.0.1 on a port the kernel picks, and that port.
    private static func boundSocket() throws -> (Int32, Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw LoopbackError("socket failed: errno \(errno)") }
        var address = Self.address(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        guard bound == 0,
            withUnsafeMutablePointer(
                to: &address,
                {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
                }) == 0
        else {
            let failure = LoopbackError("bind or getsockname failed: errno \(errno)")
            close(fd)
            throw failure
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// `127.0.0.1:port` as a socket address.
    public static func address(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}

/// A loopback socket call failed; the message names the call and errno.
public struct LoopbackError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
