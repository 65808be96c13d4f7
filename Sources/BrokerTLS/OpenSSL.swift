#if canImport(Glibc)
import Glibc
#endif

/// The system's OpenSSL (libssl and libcrypto 3, or 1.1), loaded with `dlopen` when the first TLS context is made.
///
/// Nothing of OpenSSL is needed at build time: each function the TLS layer calls is
/// looked up with `dlsym` and called through a `@convention(c)` type declared here,
/// with every OpenSSL object an opaque pointer. Macros (`SSL_CTX_set_min_proto_version`,
/// `SSL_set_tlsext_host_name`, `SSL_CTX_set_mode`) are their `*_ctrl` calls.
///
/// `@unchecked Sendable`: every stored property is a `let` set once in `init`, and the
/// functions are thread-safe for distinct `SSL` objects (OpenSSL ≥ 1.1 locks internally).
final class OpenSSL: @unchecked Sendable {
    typealias Method = @convention(c) () -> OpaquePointer?
    typealias New = @convention(c) (OpaquePointer?) -> OpaquePointer?
    typealias Free = @convention(c) (OpaquePointer?) -> Void
    typealias Ctrl = @convention(c) (OpaquePointer?, Int32, Int, UnsafeMutableRawPointer?) -> Int
    typealias Status = @convention(c) (OpaquePointer?) -> Int32
    typealias LoadLocations = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32
    typealias UseKeyFile = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32
    typealias SetVerify = @convention(c) (OpaquePointer?, Int32, UnsafeMutableRawPointer?) -> Void
    typealias SetFD = @convention(c) (OpaquePointer?, Int32) -> Int32
    typealias SetString = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Int32
    typealias SetFlags = @convention(c) (OpaquePointer?, UInt32) -> Void
    typealias Read = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32) -> Int32
    typealias Write = @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int32) -> Int32
    typealias GetError = @convention(c) (OpaquePointer?, Int32) -> Int32
    typealias VerifyResult = @convention(c) (OpaquePointer?) -> Int
    typealias ErrorString = @convention(c) (Int) -> UnsafePointer<CChar>?
    typealias ReasonString = @convention(c) (UInt) -> UnsafePointer<CChar>?
    typealias GetErrorCode = @convention(c) () -> UInt
    typealias ClearErrors = @convention(c) () -> Void

    let clientMethod: Method
    let contextNew: New
    let contextFree: Free
    let contextCtrl: Ctrl
    let contextDefaultVerifyPaths: Status
    let contextLoadVerifyLocations: LoadLocations
    let contextSetVerify: SetVerify
    let contextUseCertificateChainFile: SetString
    let contextUsePrivateKeyFile: UseKeyFile
    let contextCheckPrivateKey: Status
    let sslNew: New
    let sslFree: Free
    let sslSetFD: SetFD
    let sslCtrl: Ctrl
    let sslSet1Host: SetString
    let sslSetHostFlags: SetFlags
    let sslGet0Param: New
    let paramSet1IP: SetString
    let sslConnect: Status
    let sslRead: Read
    let sslWrite: Write
    let sslGetError: GetError
    let sslShutdown: Status
    let sslPending: Status
    let sslGetVerifyResult: VerifyResult
    let sslGetPeerCertificate: New
    let x509Free: Free
    let verifyErrorString: ErrorString
    let errGetError: GetErrorCode
    let errReasonString: ReasonString
    let errClear: ClearErrors

    /// The library, loaded once per process; the failure names what is missing.
    static let shared: Result<OpenSSL, TLSError> = load()

    private init(ssl: UnsafeMutableRawPointer, crypto: UnsafeMutableRawPointer) throws(TLSError) {
        func symbol<T>(_ handle: UnsafeMutableRawPointer, _ names: String..., as type: T.Type) throws(TLSError) -> T {
            for name in names {
                if let found = dlsym(handle, name) { return unsafeBitCast(found, to: type) }
            }
            throw .unavailable(reason: "the system's OpenSSL has no \(names[0])")
        }
        clientMethod = try symbol(ssl, "TLS_client_method", as: Method.self)
        contextNew = try symbol(ssl, "SSL_CTX_new", as: New.self)
        contextFree = try symbol(ssl, "SSL_CTX_free", as: Free.self)
        contextCtrl = try symbol(ssl, "SSL_CTX_ctrl", as: Ctrl.self)
        contextDefaultVerifyPaths = try symbol(ssl, "SSL_CTX_set_default_verify_paths", as: Status.self)
        contextLoadVerifyLocations = try symbol(ssl, "SSL_CTX_load_verify_locations", as: LoadLocations.self)
        contextSetVerify = try symbol(ssl, "SSL_CTX_set_verify", as: SetVerify.self)
        contextUseCertificateChainFile = try symbol(ssl, "SSL_CTX_use_certificate_chain_file", as: SetString.self)
        contextUsePrivateKeyFile = try symbol(ssl, "SSL_CTX_use_PrivateKey_file", as: UseKeyFile.self)
        contextCheckPrivateKey = try symbol(ssl, "SSL_CTX_check_private_key", as: Status.self)
        sslNew = try symbol(ssl, "SSL_new", as: New.self)
        sslFree = try symbol(ssl, "SSL_free", as: Free.self)
        sslSetFD = try symbol(ssl, "SSL_set_fd", as: SetFD.self)
        sslCtrl = try symbol(ssl, "SSL_ctrl", as: Ctrl.self)
        sslSet1Host = try symbol(ssl, "SSL_set1_host", as: SetString.self)
        sslSetHostFlags = try symbol(ssl, "SSL_set_hostflags", as: SetFlags.self)
        sslGet0Param = try symbol(ssl, "SSL_get0_param", as: New.self)
        paramSet1IP = try symbol(crypto, "X509_VERIFY_PARAM_set1_ip_asc", as: SetString.self)
        sslConnect = try symbol(ssl, "SSL_connect", as: Status.self)
        sslRead = try symbol(ssl, "SSL_read", as: Read.self)
        sslWrite = try symbol(ssl, "SSL_write", as: Write.self)
        sslGetError = try symbol(ssl, "SSL_get_error", as: GetError.self)
        sslShutdown = try symbol(ssl, "SSL_shutdown", as: Status.self)
        sslPending = try symbol(ssl, "SSL_pending", as: Status.self)
        sslGetVerifyResult = try symbol(ssl, "SSL_get_verify_result", as: VerifyResult.self)
        // 3.0 renamed it; 1.1 has only the old name (same contract: a reference the caller frees).
        sslGetPeerCertificate = try symbol(ssl, "SSL_get1_peer_certificate", "SSL_get_peer_certificate", as: New.self)
        x509Free = try symbol(crypto, "X509_free", as: Free.self)
        verifyErrorString = try symbol(crypto, "X509_verify_cert_error_string", as: ErrorString.self)
        errGetError = try symbol(crypto, "ERR_get_error", as: GetErrorCode.self)
        errReasonString = try symbol(crypto, "ERR_reason_error_string", as: ReasonString.self)
        errClear = try symbol(crypto, "ERR_clear_error", as: ClearErrors.self)
    }

    private static func load() -> Result<OpenSSL, TLSError> {
        // The versioned names: the unversioned `libssl.so` ships only in the -dev package.
        for (sslName, cryptoName) in [("libssl.so.3", "libcrypto.so.3"), ("libssl.so.1.1", "libcrypto.so.1.1")] {
            guard let crypto = dlopen(cryptoName, RTLD_NOW | RTLD_LOCAL) else { continue }
            guard let ssl = dlopen(sslName, RTLD_NOW | RTLD_LOCAL) else {
                dlclose(crypto)
                continue
            }
            // OpenSSL writes to the socket with write(2), not send(MSG_NOSIGNAL): a peer that closed must give EPIPE,
            // not end the process (the server does the same at start).
            signal(SIGPIPE, SIG_IGN)
            do throws(TLSError) {
                return .success(try OpenSSL(ssl: ssl, crypto: crypto))
            } catch {
                return .failure(error)
            }
        }
        return .failure(.unavailable(reason: "libssl.so.3 could not be loaded (install the libssl3 package)"))
    }

    /// The reason text of the oldest queued error, or nil; empties the queue.
    func takeErrors() -> (reasons: [Int32], text: String?) {
        var reasons: [Int32] = []
        var text: String?
        while case let code = errGetError(), code != 0 {
            // ERR_GET_REASON: the low 23 bits, unless the system flag (the top bit of 32) marks an errno.
            if code & 0x8000_0000 == 0 { reasons.append(Int32(code & 0x7F_FFFF)) }
            if text == nil, let reason = errReasonString(code) { text = String(cString: reason) }
        }
        return (reasons, text)
    }
}
