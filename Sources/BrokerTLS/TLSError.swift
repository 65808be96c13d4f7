/// Why a TLS connection could not be used; each case names its cause and carries no secret or peer byte.
public enum TLSError: Error, Sendable, Equatable {
    /// The system's OpenSSL could not be loaded, or lacks a function; `reason` says which.
    case unavailable(reason: String)
    /// The CA file (`BROKER_UPSTREAM_CA_FILE`, `BROKER_REDIS_TLS_CA_FILE`) could not be read as PEM certificates.
    case caFile(reason: String)
    /// The client certificate or its key (`BROKER_REDIS_TLS_CERT_FILE`, `_KEY_FILE`) could not be loaded, or do not match.
    case clientCertificate(reason: String)
    /// The peer's certificate chain did not verify; `reason` is OpenSSL's sentence for the verify result.
    case certificate(reason: String)
    /// The certificate is valid but not for the host name (or address) that was asked for.
    case hostname
    /// The peer offers no TLS version this client accepts (1.2 or newer).
    case version
    /// The handshake failed for another reason; `reason` is OpenSSL's fixed phrase.
    case handshake(reason: String)
    /// The connection failed after the handshake (reset, or closed without close_notify).
    case connectionLost

    /// A short sentence naming the cause, with no secret in it.
    public var reason: String {
        switch self {
        case .unavailable(let reason), .caFile(let reason), .handshake(let reason): reason
        case .clientCertificate(let reason): "client certificate: \(reason)"
        case .certificate(let reason): "certificate: \(reason)"
        case .hostname: "the certificate is not for this host"
        case .version: "no TLS version 1.2 or newer in common"
        case .connectionLost: "connection lost"
        }
    }
}
