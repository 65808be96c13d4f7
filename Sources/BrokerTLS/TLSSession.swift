#if canImport(Glibc)
import Glibc
#endif

/// What one TLS call achieved on a non-blocking socket.
public enum TLSStep: Sendable, Equatable {
    /// The handshake is done (from ``TLSSession/handshake()``), or this many bytes moved (more than zero).
    case done(Int)
    /// Nothing can move until the socket is readable.
    case wantRead
    /// Nothing can move until the socket is writable.
    case wantWrite
    /// The peer closed the TLS stream with close_notify (read only).
    case end
    /// The connection failed; no further call may be made but ``TLSSession/close()``.
    case failed(TLSError)
}

/// The client end of one TLS connection over a connected non-blocking socket the caller owns.
///
/// Every call may want the socket readable or writable, whichever way the data
/// goes (OpenSSL `SSL_get_error`), and is retried with the same arguments once it
/// is. Sends SNI (RFC 6066 §3, names only, never an address) and checks the
/// certificate's name or address (RFC 9525) besides its chain.
///
/// Not thread-safe: one owner calls it, one call at a time (the error queue is per thread, read right after each call).
public final class TLSSession {
    private let library: OpenSSL
    private let ssl: OpaquePointer
    private var usable = false

    /// Prepares a session over the connected socket `fd` for `host` (a name or an IP literal); nothing is sent yet.
    public init(context: TLSContext, fd: Int32, host: String) throws(TLSError) {
        library = context.library
        library.errClear()
        guard let ssl = library.sslNew(context.context) else { throw .unavailable(reason: "SSL_new failed") }
        self.ssl = ssl
        guard library.sslSetFD(ssl, fd) == 1 else { throw .unavailable(reason: "SSL_set_fd failed") }
        if Self.isAddress(host) {
            guard library.paramSet1IP(library.sslGet0Param(ssl), host) == 1 else { throw .hostname }
        } else {
            // SSL_set_tlsext_host_name (SSL_CTRL_SET_TLSEXT_HOSTNAME 55, TLSEXT_NAMETYPE_host_name 0).
            let sni = host.withCString { library.sslCtrl(ssl, 55, 0, UnsafeMutableRawPointer(mutating: $0)) }
            // X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS 4: `*` only as a whole left-most label (RFC 9525 §6.3).
            library.sslSetHostFlags(ssl, 4)
            guard sni == 1, library.sslSet1Host(ssl, host) == 1 else { throw .hostname }
        }
    }

    deinit {
        library.sslFree(ssl)
    }

    /// Bytes already decrypted and waiting in OpenSSL, which the socket's readiness will not announce.
    public var hasBuffered: Bool { library.sslPending(ssl) > 0 }

    /// Runs the handshake one step; `.done(0)` once it is complete and the peer's certificate verified.
    public func handshake() -> TLSStep {
        library.errClear()
        let rc = library.sslConnect(ssl)
        if rc == 1 {
            // SSL_get_verify_result is X509_V_OK even without a certificate: make sure there was one.
            guard let certificate = library.sslGetPeerCertificate(ssl) else {
                return .failed(.certificate(reason: "no certificate presented"))
            }
            library.x509Free(certificate)
            let verified = library.sslGetVerifyResult(ssl)
            guard verified == 0 else { return .failed(certificateError(verified)) }
            usable = true
            return .done(0)
        }
        return step(rc, handshaking: true)
    }

    /// Reads decrypted bytes into `buffer`.
    public func read(into buffer: UnsafeMutableRawBufferPointer) -> TLSStep {
        library.errClear()
        let rc = library.sslRead(ssl, buffer.baseAddress, Int32(clamping: buffer.count))
        return rc > 0 ? .done(Int(rc)) : step(rc, handshaking: false)
    }

    /// Writes `bytes` (a partial write returns what was taken); retry with the same bytes after `wantRead`/`wantWrite`.
    public func write(_ bytes: UnsafeRawBufferPointer) -> TLSStep {
        guard !bytes.isEmpty else { return .done(0) }
        library.errClear()
        let rc = library.sslWrite(ssl, bytes.baseAddress, Int32(clamping: bytes.count))
        return rc > 0 ? .done(Int(rc)) : step(rc, handshaking: false)
    }

    /// Sends close_notify when the connection is still sound (once, without waiting for the peer's); the caller closes the socket.
    public func close() {
        guard usable else { return }
        usable = false
        library.errClear()
        _ = library.sslShutdown(ssl)
        library.errClear()
    }

    private func step(_ rc: Int32, handshaking: Bool) -> TLSStep {
        let code = library.sslGetError(ssl, rc)
        switch code {
        case 2: return .wantRead  // SSL_ERROR_WANT_READ
        case 3: return .wantWrite  // SSL_ERROR_WANT_WRITE
        case 6:  // SSL_ERROR_ZERO_RETURN: close_notify received.
            library.errClear()
            usable = false
            return handshaking ? .failed(.handshake(reason: "the peer closed the connection")) : .end
        default:
            // SSL_ERROR_SSL or SSL_ERROR_SYSCALL: no more I/O and no SSL_shutdown on this connection.
            usable = false
            let errors = library.takeErrors()
            guard handshaking else { return .failed(.connectionLost) }
            let verified = library.sslGetVerifyResult(ssl)
            if verified != 0 { return .failed(certificateError(verified)) }
            if errors.reasons.contains(where: Self.versionReasons.contains) { return .failed(.version) }
            return .failed(.handshake(reason: errors.text ?? "the peer closed the connection"))
        }
    }

    /// SSL_R_ reasons meaning no common protocol version: NO_PROTOCOLS_AVAILABLE 191, UNSUPPORTED_PROTOCOL 258,
    /// UNSUPPORTED_SSL_VERSION 259, WRONG_SSL_VERSION 266, WRONG_VERSION_NUMBER 267, VERSION_TOO_LOW 396,
    /// TLSV1_ALERT_PROTOCOL_VERSION 1070.
    private static let versionReasons: Set<Int32> = [191, 258, 259, 266, 267, 396, 1070]

    /// X509_V_ERR_HOSTNAME_MISMATCH 62, X509_V_ERR_IP_ADDRESS_MISMATCH 64 are the name check; the rest the chain.
    private func certificateError(_ verified: Int) -> TLSError {
        if verified == 62 || verified == 64 { return .hostname }
        let reason = library.verifyErrorString(verified).map { String(cString: $0) } ?? "verify error \(verified)"
        return .certificate(reason: reason)
    }

    /// Whether `host` is an IPv4 or IPv6 literal (brackets already removed).
    static func isAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }
}
