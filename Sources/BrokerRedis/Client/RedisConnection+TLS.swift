import BrokerTLS

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// TLS on a connection's socket (`rediss://`): the handshake at connect, then every read and write through the session.
extension RedisConnection {
    /// Runs the TLS handshake over the freshly connected socket, within `deadline`; on the queue.
    ///
    /// The server's certificate must chain to the system's store or the
    /// configured CA and name the URL's host (RFC 9525); a failure is
    /// ``RedisError/unavailable(_:)`` naming the cause, such as
    /// `TLS with redis at redis.internal:6380 failed: certificate: unable to get local issuer certificate`.
    func startTLS(_ settings: RedisTLS, deadline: UInt64) throws(RedisError) {
        let session: TLSSession
        do throws(TLSError) {
            session = try TLSSession(context: try settings.context(), fd: fd, host: url.host)
        } catch {
            throw .unavailable("TLS with redis at \(url.endpoint) failed: \(error.reason)")
        }
        while true {
            let events: Int16
            switch session.handshake() {
            case .done:
                tlsSession = session
                return
            case .wantRead: events = Int16(POLLIN)
            case .wantWrite: events = Int16(POLLOUT)
            case .failed(let error):
                throw .unavailable("TLS with redis at \(url.endpoint) failed: \(error.reason)")
            case .end:
                throw .unavailable("TLS with redis at \(url.endpoint) failed: the server closed the connection")
            }
            switch RedisSocket.wait(fd, events: events, deadline: deadline, now: RedisSocket.monotonicNow) {
            case .ready: continue
            case .timedOut: throw .timeout
            case .failed(let code): throw .unavailable("poll on \(url.endpoint): \(RedisSocket.errorText(code))")
            }
        }
    }

    /// Reads what the session can decrypt now, including records OpenSSL already holds, and returns the replies completed.
    func receiveTLS(_ session: TLSSession) throws(RedisError) -> [RESPValue] {
        var replies: [RESPValue] = []
        tlsReadWantsWrite = false
        repeat {
            let step = readBuffer.withUnsafeMutableBytes { session.read(into: $0) }
            switch step {
            case .done(let count):
                replies += try readBuffer.withUnsafeBufferPointer { (buffer) throws(RedisError) in
                    try parser.feed(UnsafeBufferPointer(rebasing: buffer[0..<count]))
                }
            case .wantRead:
                // Nothing more for the application now (a TLS 1.3 session ticket alone is consumed this way).
                return replies
            case .wantWrite:
                tlsReadWantsWrite = true
                return replies
            case .end:
                throw .unavailable("redis at \(url.endpoint) closed the connection")
            case .failed(let error):
                throw .unavailable("read from \(url.endpoint): \(error.reason)")
            }
        } while session.hasBuffered
        return replies
    }

    /// Writes as much of `request` from `offset` as the session takes; 0 when it must wait for the socket.
    func transmitTLS(_ session: TLSSession, _ request: [UInt8], from offset: Int) throws(RedisError) -> Int {
        tlsWriteWantsRead = false
        let step = request.withUnsafeBytes { bytes in
            session.write(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
        }
        switch step {
        case .done(let count): return count
        case .wantWrite: return 0
        case .wantRead:
            tlsWriteWantsRead = true
            return 0
        case .end: throw .unavailable("redis at \(url.endpoint) closed the connection")
        case .failed(let error): throw .unavailable("write to \(url.endpoint): \(error.reason)")
        }
    }

    /// The poll(2) events an exchange waits for: input always, output while writing (or while TLS needs it either way).
    func exchangeEvents(writing: Bool) -> Int16 {
        let output = (writing && !tlsWriteWantsRead) || tlsReadWantsWrite
        return Int16(POLLIN) | (output ? Int16(POLLOUT) : 0)
    }

    /// Whether the idle TLS connection has application data or was closed: either means it is out of step or gone.
    ///
    /// A readable socket is not enough: a TLS 1.3 server may send a session ticket or
    /// a key update at any time, which a read consumes without any data for the application.
    func idleTLSConnectionIsStale(_ session: TLSSession) -> Bool {
        if session.hasBuffered { return true }
        guard RedisSocket.idleConnectionIsStale(fd) else { return false }
        var scratch: UInt8 = 0
        switch withUnsafeMutableBytes(of: &scratch, { session.read(into: $0) }) {
        case .wantRead, .wantWrite: return false
        case .done, .end, .failed: return true
        }
    }
}
