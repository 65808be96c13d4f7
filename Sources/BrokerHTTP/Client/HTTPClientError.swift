/// Why an outbound call produced no usable response; each case names its cause and carries no URL or secret.
public enum HTTPClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL is not an absolute `http://` or `https://` URL this client can send to.
    case invalidURL
    /// The request has a method, header name or header value that cannot be sent as is.
    case invalidRequest
    /// The scheme is not one this client serves.
    case unsupportedScheme
    /// The host name did not resolve.
    case hostNotFound
    /// The host resolved to an address the request's ``AddressPolicy`` refuses; no socket was made.
    case addressRefused
    /// Every address of the host refused the connection (or was unreachable).
    case connectRefused
    /// No connection was established within the connect timeout.
    case connectTimeout
    /// The call's total deadline passed.
    case deadline
    /// The body is, or announced to be, larger than `limit` bytes; the rest was not read.
    case tooLarge(limit: Int)
    /// The answer is not acceptable HTTP/1.1; `reason` is a fixed sentence, never the peer's bytes.
    case badResponse(reason: String)
    /// The connection was reset or closed before the answer was complete.
    case connectionLost
    /// The caller was cancelled.
    case cancelled
    /// The server's certificate chain did not verify; `reason` is OpenSSL's sentence (expired, self-signed, unknown CA …).
    case tlsCertificate(reason: String)
    /// The server's certificate is not for the host name (or address) of the URL.
    case tlsHostname
    /// The server offers no TLS version this client accepts (1.2 or newer).
    case tlsVersion
    /// The TLS handshake failed for another reason (or TLS is unavailable); `reason` is a fixed phrase.
    case tlsHandshake(reason: String)

    /// The snake_case name of the cause, for logs and metrics labels.
    public var code: String {
        switch self {
        case .invalidURL: "invalid_url"
        case .invalidRequest: "invalid_request"
        case .unsupportedScheme: "unsupported_scheme"
        case .hostNotFound: "host_not_found"
        case .addressRefused: "address_refused"
        case .connectRefused: "connect_refused"
        case .connectTimeout: "connect_timeout"
        case .deadline: "deadline"
        case .tooLarge: "too_large"
        case .badResponse: "bad_response"
        case .connectionLost: "connection_lost"
        case .cancelled: "cancelled"
        case .tlsCertificate: "tls_certificate"
        case .tlsHostname: "tls_hostname"
        case .tlsVersion: "tls_version"
        case .tlsHandshake: "tls_handshake"
        }
    }

    /// The answer's body is in a content coding other than identity, which was not asked for and is never decoded.
    public static let refusedContentCoding = HTTPClientError.badResponse(
        reason: "The answer is in a content coding that was not asked for.")

    /// A short sentence for logs.
    public var description: String {
        switch self {
        case .badResponse(let reason): "bad_response: \(reason)"
        case .tooLarge(let limit): "too_large: the answer is larger than \(limit) bytes"
        case .tlsCertificate(let reason): "tls_certificate: \(reason)"
        case .tlsHandshake(let reason): "tls_handshake: \(reason)"
        default: code
        }
    }
}
