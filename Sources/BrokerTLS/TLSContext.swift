#if canImport(Glibc)
import Glibc
#endif

/// The client side's TLS settings, made once and shared by every connection: TLS 1.2 or newer, the peer always verified.
///
/// Certificates are checked against the system's trust store, plus the PEM
/// certificates of `caFile` when one is given (a private CA is added, never
/// trusted instead of checking); there is no setting that turns checking off.
///
/// `@unchecked Sendable`: the `SSL_CTX` is configured in `init` and only read afterwards
/// (`SSL_new`), which OpenSSL allows from any thread.
public final class TLSContext: @unchecked Sendable {
    let library: OpenSSL
    let context: OpaquePointer

    /// Creates a context trusting the system's store and, if given, the certificates in the PEM file `caFile`.
    public init(caFile: String? = nil) throws(TLSError) {
        let library = try OpenSSL.shared.get()
        library.errClear()
        guard let method = library.clientMethod(), let context = library.contextNew(method) else {
            throw .unavailable(reason: "SSL_CTX_new failed")
        }
        self.library = library
        self.context = context
        // SSL_CTX_set_min_proto_version (SSL_CTRL_SET_MIN_PROTO_VERSION 123): TLS 1.2 (RFC 8996 deprecates 1.0 and 1.1).
        guard library.contextCtrl(context, 123, 0x0303, nil) == 1 else { throw .unavailable(reason: "TLS 1.2 minimum not accepted") }
        // SSL_CTX_set_mode (SSL_CTRL_MODE 33): ENABLE_PARTIAL_WRITE 1 | ACCEPT_MOVING_WRITE_BUFFER 2, as a non-blocking
        // writer needs: a write may take part of the bytes, and a retry may come from another address.
        _ = library.contextCtrl(context, 33, 3, nil)
        // SSL_VERIFY_PEER with no callback: a chain that does not verify ends the handshake.
        library.contextSetVerify(context, 1, nil)
        _ = library.contextDefaultVerifyPaths(context)
        if let caFile {
            guard access(caFile, R_OK) == 0 else { throw .caFile(reason: "the file cannot be read") }
            guard library.contextLoadVerifyLocations(context, caFile, nil) == 1 else {
                let reason = library.takeErrors().text ?? "no certificate in it"
                throw .caFile(reason: reason)
            }
        }
        library.errClear()
    }

    deinit {
        library.contextFree(context)
    }
}
