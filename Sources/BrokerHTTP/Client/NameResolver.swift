import Dispatch

#if canImport(Glibc)
import Glibc
#endif

/// One address a host resolved to, as the bytes of a `sockaddr`.
struct SocketAddress: Sendable {
    /// `AF_INET` or `AF_INET6`.
    let family: Int32
    private let bytes: [UInt8]

    init(family: Int32, address: UnsafePointer<sockaddr>, length: socklen_t) {
        self.family = family
        bytes = Array(UnsafeRawBufferPointer(start: address, count: Int(length)))
    }

    /// Calls `body` with the address as a `sockaddr` pointer and its length.
    func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        bytes.withUnsafeBytes { body($0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(bytes.count)) }
    }
}

/// Turns a host name into addresses without ever blocking an event-loop thread.
///
/// A numeric address is parsed at once (`AI_NUMERICHOST` never touches the network);
/// a name goes to `getaddrinfo` on a queue of its own, whose threads may block.
enum NameResolver {
    /// Where blocking look-ups run.
    private static let queue = DispatchQueue(label: "token-broker.http.resolver", qos: .userInitiated, attributes: .concurrent)

    /// The addresses of `host` for TCP port `port`, IPv4 and IPv6 in the resolver's order.
    static func resolve(_ host: String, port: Int) async -> Result<[SocketAddress], HTTPClientError> {
        if let numeric = lookUp(host, port: port, numericOnly: true) { return .success(numeric) }
        // RFC 6761 §6.3: `localhost` and every name under it are the loopback address, never sent to DNS (so a
        // per-account host such as `acme.localhost` reaches this machine, as a test's fake provider needs).
        let lowered = host.lowercased()
        if lowered == "localhost" || lowered.hasSuffix(".localhost"), let loopback = lookUp("127.0.0.1", port: port, numericOnly: true) {
            return .success(loopback)
        }
        return await withCheckedContinuation { continuation in
            queue.async {
                let found = lookUp(host, port: port, numericOnly: false) ?? []
                continuation.resume(returning: found.isEmpty ? .failure(.hostNotFound) : .success(found))
            }
        }
    }

    /// `getaddrinfo` for a stream socket; nil when nothing was found.
    private static func lookUp(_ host: String, port: Int, numericOnly: Bool) -> [SocketAddress]? {
        var hints = addrinfo()
        hints.ai_flags = AI_NUMERICSERV | (numericOnly ? AI_NUMERICHOST : AI_ADDRCONFIG)
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &result) == 0, let first = result else { return nil }
        defer { freeaddrinfo(result) }
        var found: [SocketAddress] = []
        var node: UnsafeMutablePointer<addrinfo>? = first
        while let info = node {
            if let address = info.pointee.ai_addr, info.pointee.ai_family == AF_INET || info.pointee.ai_family == AF_INET6 {
                found.append(SocketAddress(family: info.pointee.ai_family, address: address, length: info.pointee.ai_addrlen))
            }
            node = info.pointee.ai_next
        }
        return found.isEmpty ? nil : found
    }
}
