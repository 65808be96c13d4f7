import BrokerTLS

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The byte stream of a session: plain TCP, or TLS over it after SSLRequest (`sslmode` other than `disable`).
///
/// Every read and write of the session goes through ``receiveAvailable()`` and ``transmit(_:from:)``, which take
/// the socket as it is (non-blocking) and report when they must wait; the waits stay in the callers, bounded by
/// their deadlines as before.
extension PostgresConnection {
    /// Reads what the session has now into the framer: true when bytes arrived, false when it must wait.
    ///
    /// With TLS, records OpenSSL already holds are read too (the socket's readiness does not announce them), and a
    /// read that only consumed a TLS 1.3 session ticket is a wait, not an end.
    @discardableResult
    func receiveAvailable() throws(PostgresError) -> Bool {
        guard let tls else {
            let count = readBuffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                readBuffer.withUnsafeBufferPointer { framer.append(UnsafeBufferPointer(rebasing: $0[0..<count])) }
                return true
            }
            if count == 0 { throw .connectionLost("the server at \(endpointText) closed the connection") }
            let code = errno
            if code == EAGAIN || code == EWOULDBLOCK || code == EINTR { return false }
            throw .connectionLost("read from \(endpointText): \(PostgresSocket.errorText(code))")
        }
        tlsReadWantsWrite = false
        var received = false
        repeat {
            switch readBuffer.withUnsafeMutableBytes({ tls.read(into: $0) }) {
            case .done(let count):
                readBuffer.withUnsafeBufferPointer { framer.append(UnsafeBufferPointer(rebasing: $0[0..<count])) }
                received = true
            case .wantRead:
                return received
            case .wantWrite:
                tlsReadWantsWrite = true
                return received
            case .end:
                throw .connectionLost("the server at \(endpointText) closed the connection")
            case .failed(let error):
                throw .connectionLost("read from \(endpointText): \(error.reason)")
            }
        } while tls.hasBuffered
        return received
    }

    /// Writes as much of `bytes` from `offset` as the session takes now; 0 when it must wait for the socket.
    func transmit(_ bytes: [UInt8], from offset: Int) throws(PostgresError) -> Int {
        guard let tls else {
            let count = bytes.withUnsafeBytes { raw in
                // MSG_NOSIGNAL: a peer that closed must give EPIPE here, not kill the process with SIGPIPE.
                send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if count > 0 { return count }
            let code = errno
            if count == 0 || code == EAGAIN || code == EWOULDBLOCK || code == EINTR { return 0 }
            throw .connectionLost("write to \(endpointText): \(PostgresSocket.errorText(code))")
        }
        tlsWriteWantsRead = false
        switch bytes.withUnsafeBytes({ tls.write(UnsafeRawBufferPointer(rebasing: $0[offset...])) }) {
        case .done(let count):
            return count
        case .wantWrite:
            return 0
        case .wantRead:
            tlsWriteWantsRead = true
            return 0
        case .end:
            throw .connectionLost("the server at \(endpointText) closed the connection")
        case .failed(let error):
            throw .connectionLost("write to \(endpointText): \(error.reason)")
        }
    }

    /// The poll(2) events a wait asks for: input, and output while writing unless TLS waits for input (or while a
    /// TLS read waits for output).
    func sessionEvents(writing: Bool) -> Int16 {
        let output = (writing && !tlsWriteWantsRead) || tlsReadWantsWrite
        return Int16(POLLIN) | (output ? Int16(POLLOUT) : 0)
    }

    /// Writes all of `bytes` before `deadline` (start-up messages, Terminate), reading nothing.
    func sendAll(_ bytes: [UInt8], deadline: UInt64) throws(PostgresError) {
        var offset = 0
        while offset < bytes.count {
            let count = try transmit(bytes, from: offset)
            if count > 0 {
                offset += count
                continue
            }
            let events = tlsWriteWantsRead ? Int16(POLLIN) : Int16(POLLOUT)
            switch PostgresSocket.wait(fd, events: events, deadline: deadline) {
            case .ready: continue
            case .timedOut, .woken: throw .deadlineExceeded(cancelled: false)
            case .failed(let code): throw .connectionLost("poll on \(endpointText): \(PostgresSocket.errorText(code))")
            }
        }
    }

    /// Whether an idle session has anything to read or has hung up (then it is out of step or gone).
    ///
    /// With TLS a readable socket is not enough: a TLS 1.3 server may send a session ticket at any time, which a
    /// read consumes without any byte for the session.
    func idleSessionIsStale() -> Bool {
        guard let tls else { return PostgresSocket.idleConnectionIsStale(fd) }
        if tls.hasBuffered { return true }
        guard PostgresSocket.idleConnectionIsStale(fd) else { return false }
        var scratch: UInt8 = 0
        switch withUnsafeMutableBytes(of: &scratch, { tls.read(into: $0) }) {
        case .wantRead, .wantWrite: return false
        case .done, .end, .failed: return true
        }
    }

    /// SSLRequest, then TLS over `fd` to `endpoint` (protocol.sgml, "SSL Session Encryption"), before `deadline`.
    ///
    /// The server answers one byte: `S` starts TLS, `N` refuses it (then this fails: the configuration asks for
    /// TLS, so there is no falling back to plain text). Exactly that byte is read, and a server that sent more
    /// before the TLS handshake is refused (CVE-2021-23222: bytes injected there would be taken as the server's).
    /// The certificate must chain to the trust store or `sslrootcert` and name `endpoint.host`.
    static func negotiateTLS(
        fd: Int32, endpoint: PostgresConfiguration.Endpoint, context: TLSContext, deadline: UInt64
    ) throws(PostgresError) -> TLSSession {
        var request = PostgresFrontend()
        request.sslRequest()
        try PostgresSocket.writeAll(fd, request.bytes, deadline: deadline, endpoint: endpoint.description)
        var answer: UInt8 = 0
        reading: while true {
            switch PostgresSocket.wait(fd, events: Int16(POLLIN), deadline: deadline) {
            case .ready:
                let count = recv(fd, &answer, 1, 0)
                if count == 1 { break reading }
                if count == 0 { throw .unavailable("\(endpoint) closed the connection after SSLRequest") }
                let code = errno
                if code == EAGAIN || code == EWOULDBLOCK || code == EINTR { continue }
                throw .unavailable("read from \(endpoint): \(PostgresSocket.errorText(code))")
            case .timedOut, .woken:
                throw .deadlineExceeded(cancelled: false)
            case .failed(let code):
                throw .unavailable("poll on \(endpoint): \(PostgresSocket.errorText(code))")
            }
        }
        switch answer {
        case UInt8(ascii: "S"): break
        case UInt8(ascii: "N"): throw .unavailable("\(endpoint) does not accept TLS (its ssl setting is off), and sslmode asks for it")
        default: throw .unavailable("\(endpoint) answered SSLRequest with neither S nor N: not a PostgreSQL server that speaks TLS")
        }
        if PostgresSocket.idleConnectionIsStale(fd) {
            throw .protocolError("\(endpoint) sent bytes before the TLS handshake")
        }
        let session: TLSSession
        do throws(TLSError) {
            session = try TLSSession(context: context, fd: fd, host: endpoint.host)
        } catch {
            throw .unavailable("TLS with \(endpoint) failed: \(error.reason)")
        }
        while true {
            let events: Int16
            switch session.handshake() {
            case .done: return session
            case .wantRead: events = Int16(POLLIN)
            case .wantWrite: events = Int16(POLLOUT)
            case .failed(let error): throw .unavailable("TLS with \(endpoint) failed: \(error.reason)")
            case .end: throw .unavailable("TLS with \(endpoint) failed: the server closed the connection")
            }
            switch PostgresSocket.wait(fd, events: events, deadline: deadline) {
            case .ready: continue
            case .timedOut, .woken: throw .deadlineExceeded(cancelled: false)
            case .failed(let code): throw .unavailable("poll on \(endpoint): \(PostgresSocket.errorText(code))")
            }
        }
    }
}
