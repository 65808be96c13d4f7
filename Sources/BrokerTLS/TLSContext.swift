#if canImport(Glibc)
import Glibc
#endif

/// The client side's TLS settings, made once and shared by every connection: TLS 1.2 or newer, the peer always verified.
///
/// Certificates are checked against the system's trust store, plus the PEM
/// certificates of `caFile` when one is given (a private CA is added, never
/// trusted instead of checking); there is no setting that turns checking off.
/// A server that asks for a client certificate (Redis with `tls-auth-clients`)
/// is shown `clientCertificate` when one is given.
///
/// `@unchecked Sendable`: the `SSL_CTX` is configured in `init` and only read afterwards
/// (`SSL_new`), which OpenSSL allows from any thread.
public final class TLSContext: @unchecked Sendable {
    let library: OpenSSL
    let context: OpaquePointer

    /// A certificate (with its chain) and its private key, both PEM files, shown to servers that ask for one.
    public struct ClientCertificate: Sendable, Hashable {
        /// The PEM file of the certificate, followed by any intermediate certificates.
        public var certificateFile: String
        /// The PEM file of the certificate's private key, unencrypted.
        public var keyFile: String

        /// Names the two files.
        public init(certificateFile: String, keyFile: String) {
            self.certificateFile = certificateFile
            self.keyFile = keyFile
        }
    }

    /// Creates a context trusting the system's store and, if given, the certificates in the PEM file `caFile`;
    /// `clientCertificate` is presented when a server asks for one.
    public init(caFile: String? = nil, clientCertificate: ClientCertificate? = nil) throws(TLSError) {
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
        if let clientCertificate {
            for file in [clientCertificate.certificateFile, clientCertificate.keyFile] where access(file, R_OK) != 0 {
                throw .clientCertificate(reason: "\(file) cannot be read")
            }
            // SSL_FILETYPE_PEM 1. The key must belong to the certificate: a mismatch would only show at the server.
            guard library.contextUseCertificateChainFile(context, clientCertificate.certificateFile) == 1,
                library.contextUsePrivateKeyFile(context, clientCertificate.keyFile, 1) == 1,
                library.contextCheckPrivateKey(context) == 1
            else {
                throw .clientCertificate(reason: library.takeErrors().text ?? "the certificate or key is not PEM")
            }
        }
        library.errClear()
    }

    deinit {
        library.contextFree(context)
    }
}
