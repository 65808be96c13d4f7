import BrokerTLS
import Synchronization

/// An HTTP/1.1 client whose sockets run on the same epoll workers as the server.
///
/// It follows no redirects, keeps no cookies and caches nothing: every answer,
/// 3xx included, goes back to the caller as it came. It asks for the identity
/// coding and refuses a body in any other, holds an answer's body to the
/// caller's cap as bytes arrive, keeps connections per scheme + host + port up
/// to a cap (a pool per origin, dropped once its last connection closed), and resolves names off the event loop. `https://` goes over TLS 1.2 or
/// newer on the system's OpenSSL, the certificate always checked against the system's
/// trust store (plus ``Configuration/caFile``) and the URL's host.
public final class HTTPClient: Sendable {
    /// Limits and timeouts.
    public struct Configuration: Sendable {
        /// Seconds a connection may take to establish (each address tried shares this).
        public var connectTimeout: Double
        /// Connections open or opening to one scheme + host + port at once; further calls wait in line.
        public var maxConnectionsPerHost: Int
        /// Seconds an unused keep-alive connection stays open.
        public var idleTimeout: Double
        /// Limits on the status line, header section and chunk framing of answers.
        public var limits: HTTPParserLimits
        /// Bytes of a streamed body queued for a slow reader before the socket stops being read.
        public var streamHighWater: Int
        /// Fields sent when a request has none of that name (APIs such as GitHub's refuse a call without User-Agent).
        public var defaultHeaders: [(name: String, value: String)]
        /// A PEM file of CA certificates trusted for `https://` besides the system's store (`BROKER_UPSTREAM_CA_FILE`).
        public var caFile: String?

        /// Creates a configuration; the defaults suit calls to identity providers.
        public init(
            connectTimeout: Double = 10, maxConnectionsPerHost: Int = 64, idleTimeout: Double = 60,
            limits: HTTPParserLimits = HTTPParserLimits(maxHeaderBytes: 65536, maxHeaderCount: 200),
            streamHighWater: Int = 256 * 1024,
            defaultHeaders: [(name: String, value: String)] = [("User-Agent", "token-broker"), ("Accept", "*/*")],
            caFile: String? = nil
        ) {
            self.caFile = caFile
            self.connectTimeout = connectTimeout
            self.maxConnectionsPerHost = maxConnectionsPerHost
            self.idleTimeout = idleTimeout
            self.limits = limits
            self.streamHighWater = streamHighWater
            self.defaultHeaders = defaultHeaders
        }
    }

    /// A pool per origin and address policy: a connection opened without a check (or under a looser one) is never
    /// handed to a call whose policy would have refused its address.
    private struct PoolKey: Hashable {
        let scheme: String
        let host: String
        let port: Int
        let policy: AddressPolicy?

        /// The origin and how many hosts the policy allows, not the hosts themselves: a `Set` hashes each element
        /// with a hasher of its own, and every outbound call looks its pool up. Equal keys still hash alike, and
        /// `==` compares every part, the policy's hosts included.
        func hash(into hasher: inout Hasher) {
            hasher.combine(scheme)
            hasher.combine(host)
            hasher.combine(port)
            hasher.combine(policy.map { $0.allowedHosts.count } ?? -1)
        }

        static func == (a: PoolKey, b: PoolKey) -> Bool {
            a.port == b.port && a.host == b.host && a.scheme == b.scheme && a.policy == b.policy
        }
    }

    /// The configuration in force.
    public let configuration: Configuration
    private let loops: HTTPEventLoops
    private let pools = Mutex<[PoolKey: ConnectionPool]>([:])
    /// The TLS context, made at the first `https://` call (loading OpenSSL then, not at start for a client that never needs it).
    private let tlsContext = Mutex<Result<TLSContext, HTTPClientError>?>(nil)

    /// Creates a client on `eventLoops` (by default the process-wide group the broker's server also runs on).
    public init(configuration: Configuration = Configuration(), eventLoops: HTTPEventLoops = .shared) {
        self.configuration = configuration
        loops = eventLoops
    }

    /// Connections open or opening to the origin of `url` under `addressPolicy` (for tests and metrics).
    public func openConnections(to url: String, addressPolicy: AddressPolicy? = nil) -> Int {
        guard let parsed = HTTPClientURL(url) else { return 0 }
        let key = PoolKey(scheme: parsed.scheme, host: parsed.host, port: parsed.port, policy: addressPolicy)
        return pools.withLock { $0[key]?.openCount ?? 0 }
    }

    /// Calls waiting in line for a connection to the origin of `url` under `addressPolicy` (for tests and metrics).
    public func waitingCalls(to url: String, addressPolicy: AddressPolicy? = nil) -> Int {
        guard let parsed = HTTPClientURL(url) else { return 0 }
        let key = PoolKey(scheme: parsed.scheme, host: parsed.host, port: parsed.port, policy: addressPolicy)
        return pools.withLock { $0[key]?.waitingCount ?? 0 }
    }

    /// Origins with a pool: those with a connection open, opening or idle, or a call waiting or about to ask for one
    /// (for tests and metrics).
    public var poolCount: Int { pools.withLock { $0.count } }

    /// Sends `request` and reads the whole answer, its body held to `maxBodyBytes`.
    ///
    /// With `truncating`, an answer whose body passes the cap is returned with its body cut
    /// there (the connection then closes) instead of failing with ``HTTPClientError/tooLarge(limit:)``.
    public func execute(
        _ request: HTTPClientRequest, timeout: Double, maxBodyBytes: Int, truncating: Bool = false
    ) async throws(HTTPClientError) -> (head: HTTPResponseHead, body: [UInt8]) {
        let deadline = Self.deadline(after: timeout)
        var retried = false
        while true {
            let channel = try await send(
                request, deadline: deadline, mode: .collect, limit: maxBodyBytes, truncates: truncating)
            let result = await channel.complete()
            if case .failure = result, !retried, channel.isRetryable {
                retried = true
                continue
            }
            return try result.get()
        }
    }

    /// Sends `request` and returns once the answer's head is in; the body is read as the caller iterates it.
    ///
    /// `timeout` bounds the whole call, body included; `maxBodyBytes` is enforced as bytes arrive.
    public func stream(
        _ request: HTTPClientRequest, timeout: Double, maxBodyBytes: Int = .max
    ) async throws(HTTPClientError) -> HTTPClientResponse {
        let deadline = Self.deadline(after: timeout)
        var retried = false
        while true {
            let channel = try await send(
                request, deadline: deadline, mode: .stream(highWater: configuration.streamHighWater), limit: maxBodyBytes,
                truncates: false)
            let result = await channel.head()
            if case .failure = result, !retried, channel.isRetryable {
                retried = true
                continue
            }
            return HTTPClientResponse(head: try result.get(), body: HTTPClientResponse.Body(channel: channel))
        }
    }

    private static func deadline(after seconds: Double) -> UInt64 {
        Monotonic.now() &+ UInt64(max(0, min(seconds, 1e9)) * 1e9)
    }

    /// Gets a connection, writes the request, and returns the channel the answer arrives on. The channel says
    /// whether a failed call may be sent once more (``ResponseChannel/isRetryable``): its connection was reused
    /// and closed before any answer, and the request is idempotent or none of it went out (RFC 9110 §9.2.2, RFC 9112 §9.3.1).
    private func send(
        _ request: HTTPClientRequest, deadline: UInt64, mode: ResponseChannel.Mode, limit: Int, truncates: Bool
    ) async throws(HTTPClientError) -> ResponseChannel {
        guard let url = HTTPClientURL(request.url) else { throw .invalidURL }
        guard url.scheme == "http" || url.scheme == "https" else { throw .unsupportedScheme }
        guard var bytes = request.encodedHead(for: url, defaults: configuration.defaultHeaders) else { throw .invalidRequest }
        let connection = try await connection(
            from: reservedPool(for: url, policy: request.addressPolicy), to: url, policy: request.addressPolicy,
            deadline: deadline)
        let channel = ResponseChannel(mode: mode)
        guard case .stream(let length, let next) = request.body else {
            if case .bytes(let body) = request.body { bytes.append(contentsOf: body) }
            // The whole request in one write; the answer (or a failure) arrives through the channel.
            connection.send(
                bytes, idempotent: request.isIdempotent, headRequest: request.method == "HEAD", channel: channel, limit: limit,
                truncates: truncates, deadline: deadline)
            return channel
        }
        // A streamed body cannot be pulled twice: such a call is sent again only when none of it went out.
        let written = await connection.start(
            bytes, complete: false, idempotent: false, headRequest: request.method == "HEAD", channel: channel, limit: limit,
            truncates: truncates, deadline: deadline)
        if case .success = written {
            guard await streamBody(next, length: length, over: connection) else {
                // The body broke off: the server must not get the end of it, and the caller gets no answer.
                channel.cancel()
                throw .cancelled
            }
        }
        return channel
    }

    /// Sends the pieces of a streamed body, each after the last reached the kernel: as they are under a
    /// `Content-Length` of `length`, else as chunks (RFC 9112 §7.1). False when the source threw or gave other than
    /// `length` bytes; true otherwise (a write that failed is left to the read side, which may hold an early answer).
    private func streamBody(
        _ next: @Sendable () async throws -> [UInt8]?, length: Int?, over connection: ClientConnection
    ) async -> Bool {
        var sent = 0
        do {
            while let piece = try await next() {
                guard !piece.isEmpty else { continue }
                if let length {
                    guard piece.count <= length - sent else { return false }
                    sent += piece.count
                    guard case .success = await connection.write(piece, last: sent == length) else { return true }
                    continue
                }
                var chunk = Array(String(piece.count, radix: 16).utf8) + [0x0D, 0x0A]
                chunk.append(contentsOf: piece)
                chunk.append(contentsOf: [0x0D, 0x0A])
                guard case .success = await connection.write(chunk, last: false) else { return true }
            }
        } catch {
            return false
        }
        if let length {
            guard sent == length else { return false }
            if length == 0 { _ = await connection.write([], last: true) }
            return true
        }
        _ = await connection.write(Array("0\r\n\r\n".utf8), last: true)
        return true
    }

    /// An idle connection of `pool` (reserved for this call), or a new one once the pool has room, connected within the
    /// connect timeout. A new one is made only when `policy` (if any) allows every address the host resolved to; it
    /// connects to those very addresses, the name kept for the Host field and TLS (SNI and certificate check).
    private func connection(
        from pool: ConnectionPool, to url: HTTPClientURL, policy: AddressPolicy?, deadline: UInt64
    ) async throws(HTTPClientError) -> ClientConnection {
        // A caller running on one of the client's workers (a handler task that prefers its connection's worker) gets a
        // connection on that worker when one is idle, and a new one there: no thread hop from its send to its answer.
        let here = HTTPWorker.current(among: loops.workers)
        switch await pool.acquire(deadline: deadline, preferring: here) {
        case .failed(let error): throw error
        case .reuse(let connection): return connection
        case .open:
            let connection = ClientConnection(worker: here ?? loops.next(), pool: pool, limits: configuration.limits)
            let addresses: [SocketAddress]
            switch await NameResolver.resolve(url.host, port: url.port) {
            case .success(let found): addresses = found
            case .failure(let error):
                pool.closed(connection)
                throw error
            }
            // One refused address refuses the call: a name answering with both a public and a private address is
            // a rebinding attempt as likely as a mistake, and trying the public one first would leave the other next.
            if let policy, !policy.exempts(host: url.host),
                addresses.contains(where: { AddressPolicy.verdict($0) != .allowed })
            {
                pool.closed(connection)
                throw .addressRefused
            }
            var tls: (context: TLSContext, host: String)?
            if url.scheme == "https" {
                switch context() {
                case .success(let context): tls = (context, url.host)
                case .failure(let error):
                    pool.closed(connection)
                    throw error
                }
            }
            let connectBy = Monotonic.now() &+ UInt64(max(0, configuration.connectTimeout) * 1e9)
            switch await connection.connect(to: addresses, tls: tls, connectBy: connectBy, deadline: deadline) {
            case .success: return connection
            case .failure(let error): throw error
            }
        }
    }

    /// The shared TLS context, made once; its failure (no OpenSSL, an unreadable CA file) is every `https://` call's.
    private func context() -> Result<TLSContext, HTTPClientError> {
        tlsContext.withLock { made in
            if let made { return made }
            let result: Result<TLSContext, HTTPClientError>
            do throws(TLSError) {
                result = .success(try TLSContext(caFile: configuration.caFile))
            } catch {
                result = .failure(TLSTransport.clientError(error))
            }
            made = result
            return result
        }
    }

    /// The pool of `url`'s origin, made when there is none, reserved (``ConnectionPool/reserve()``) for a call that
    /// acquires from it next: found and reserved under the table's lock, so it is not dropped meanwhile.
    private func reservedPool(for url: HTTPClientURL, policy: AddressPolicy?) -> ConnectionPool {
        let key = PoolKey(scheme: url.scheme, host: url.host, port: url.port, policy: policy)
        return pools.withLock { table in
            let pool: ConnectionPool
            if let existing = table[key] {
                pool = existing
            } else {
                pool = ConnectionPool(
                    cap: configuration.maxConnectionsPerHost, idleTimeout: configuration.idleTimeout,
                    onUnused: { [weak self] unused in self?.drop(unused, key: key) })
                table[key] = pool
            }
            pool.reserve()
            return pool
        }
    }

    /// Forgets `pool` when it is still `key`'s and still unused: every connection closed (at the idle timeout, by the
    /// peer, or never made), nobody waiting, no call about to ask. The table's lock is taken before the pool's, as
    /// ``reservedPool(for:policy:)`` takes them, so no call can reserve it between the check and the removal.
    private func drop(_ pool: ConnectionPool, key: PoolKey) {
        pools.withLock { table in
            guard table[key] === pool, pool.isUnused else { return }
            table[key] = nil
        }
    }
}
