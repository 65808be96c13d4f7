import BrokerTLS
import Synchronization

/// How a `rediss://` connection sets up TLS: a private CA for the server's certificate, and a client certificate.
///
/// The server's certificate is always verified, against the system's trust store
/// plus `caFile` when one is given (`BROKER_REDIS_TLS_CA_FILE`), and must name the
/// host of the URL. A client certificate (`BROKER_REDIS_TLS_CERT_FILE` and
/// `_KEY_FILE`) is shown to a server that asks for one: Redis does by default
/// (`tls-auth-clients yes`).
public struct RedisTLS: Sendable, Hashable {
    /// A PEM file of CA certificates trusted besides the system's store.
    public var caFile: String?
    /// The certificate and key shown to a server that asks for one.
    public var clientCertificate: TLSContext.ClientCertificate?

    /// Creates settings; with no argument, the system's store and no client certificate.
    public init(caFile: String? = nil, clientCertificate: TLSContext.ClientCertificate? = nil) {
        self.caFile = caFile
        self.clientCertificate = clientCertificate
    }

    /// The context for these settings, made once per process: loading the system's store takes milliseconds,
    /// and every connection of every pool (and every reconnect) shares it.
    public func context() throws(TLSError) -> TLSContext {
        if let made = Self.contexts.withLock({ $0[self] }) { return made }
        let context = try TLSContext(caFile: caFile, clientCertificate: clientCertificate)
        return Self.contexts.withLock { contexts in
            if let made = contexts[self] { return made }
            contexts[self] = context
            return context
        }
    }

    private static let contexts = Mutex<[RedisTLS: TLSContext]>([:])
}
