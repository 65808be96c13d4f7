/// Why an outbound call failed below HTTP, named for logs and the `cause` label of `/metrics`.
///
/// The set is closed, so a metrics label built from it stays bounded whatever the peers do.
public enum UpstreamCause: String, Sendable, CaseIterable {
    /// The host resolved to an address the call's address policy refuses (a private or special-purpose range); no
    /// connection was attempted.
    case addressRefused = "address_refused"
    /// Every address of the host refused the connection (or was unreachable).
    case connectRefused = "connect_refused"
    /// No connection (TLS handshake included) within the connect timeout.
    case connectTimeout = "connect_timeout"
    /// The host name did not resolve.
    case hostNotFound = "host_not_found"
    /// The server's certificate chain did not verify (expired, self-signed, unknown CA …).
    case tlsCertificate = "tls_certificate"
    /// The server's certificate is not for the URL's host.
    case tlsHostname = "tls_hostname"
    /// The server offers no TLS version 1.2 or newer.
    case tlsVersion = "tls_version"
    /// The TLS handshake failed for another reason.
    case tlsHandshake = "tls_handshake"
    /// The call's total deadline passed.
    case deadline
    /// The answer is larger than the cap.
    case tooLarge = "too_large"
    /// The answer is not acceptable HTTP/1.1 (or is in a content coding that was not asked for).
    case badResponse = "bad_response"
    /// The connection was reset or closed before the answer was complete.
    case connectionLost = "connection_lost"
    /// The URL or request cannot be sent as is (a configuration mistake, not the peer's).
    case invalidRequest = "invalid_request"
    /// The caller went away before the answer came.
    case cancelled
}
