import BrokerCore

/// Where and how a ``PostgresClient`` connects: hosts, login, database and the libpq-style options it honours.
///
/// Build it with ``parse(_:)`` from `postgres://…` or set the fields directly. The password is a `Secret`,
/// so printing a configuration never shows it.
public struct PostgresConfiguration: Sendable, Equatable {
    /// One server to try: a host name or address and a TCP port.
    public struct Endpoint: Sendable, Equatable, CustomStringConvertible {
        /// The host name or address, without brackets for IPv6.
        public var host: String
        /// The TCP port.
        public var port: Int

        /// Creates an endpoint.
        public init(host: String, port: Int = 5432) {
            self.host = host
            self.port = port
        }

        /// `host:port`, with IPv6 in brackets.
        public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
    }

    /// Which server of several a connection may settle on (libpq's `target_session_attrs`).
    public enum TargetSessionAttributes: String, Sendable, Equatable {
        /// The first server that accepts the login.
        case any
        /// Only a server that takes writes: not in hot standby and `default_transaction_read_only` off.
        case readWrite = "read-write"
    }

    /// How the connection is protected (libpq's `sslmode`).
    ///
    /// Every mode that asks for TLS gets the checks of `verify-full`: the server's certificate must chain to the
    /// system's trust store or `sslrootcert`, and name the host connected to (RFC 9525). libpq's `require` and
    /// `verify-ca` would skip some of them; this client never turns a check off (as ``BrokerTLS/TLSContext`` says),
    /// so those modes fail closed with the certificate error rather than connect to a server they cannot identify.
    public enum SSLMode: String, Sendable, Equatable {
        /// Plain TCP.
        case disable
        /// TLS, checked as `verify-full`.
        case require
        /// TLS, checked as `verify-full`.
        case verifyCA = "verify-ca"
        /// TLS with the certificate checked against the trust store (and `sslrootcert`) and the host name.
        case verifyFull = "verify-full"

        /// Whether the session starts with SSLRequest and TLS.
        public var usesTLS: Bool { self != .disable }
    }

    /// The servers, tried in order; `connect_timeout` applies to each.
    public var endpoints: [Endpoint]
    /// The role to log in as.
    public var user: String
    /// The password, if the server asks for one.
    public var password: Secret?
    /// The database; PostgreSQL's default is the user's name.
    public var database: String
    /// Sent as `application_name`, shown in `pg_stat_activity`.
    public var applicationName: String?
    /// Seconds a connect (TCP, login and the read-write check) may take per host.
    public var connectTimeout: Double
    /// Which server to settle on.
    public var targetSessionAttributes: TargetSessionAttributes
    /// The transport's protection.
    public var sslMode: SSLMode
    /// A PEM file of CA certificates trusted beside the system's store (`sslrootcert`).
    public var sslRootCert: String?
    /// A PEM client certificate (`sslcert`) and its key (`sslkey`), shown when the server asks for one.
    public var sslCert: String?
    public var sslKey: String?
    /// Whether the legacy `md5` password login is accepted; off by default (SCRAM-SHA-256 only).
    public var allowMD5: Bool
    /// Seconds a statement may take by default before it is cancelled.
    public var statementTimeout: Double
    /// How many connections the pool holds at most.
    public var poolSize: Int
    /// The largest message accepted from the server, in bytes; a longer one closes the connection.
    public var maximumMessageBytes: Int

    /// Creates a configuration with libpq's defaults where they exist.
    public init(
        endpoints: [Endpoint], user: String, password: Secret? = nil, database: String? = nil, applicationName: String? = nil,
        connectTimeout: Double = 10, targetSessionAttributes: TargetSessionAttributes = .any, sslMode: SSLMode = .disable,
        allowMD5: Bool = false, statementTimeout: Double = 30, poolSize: Int = 8, maximumMessageBytes: Int = 64 << 20
    ) {
        self.endpoints = endpoints
        self.user = user
        self.password = password
        self.database = database ?? user
        self.applicationName = applicationName
        self.connectTimeout = connectTimeout
        self.targetSessionAttributes = targetSessionAttributes
        self.sslMode = sslMode
        self.allowMD5 = allowMD5
        self.statementTimeout = statementTimeout
        self.poolSize = poolSize
        self.maximumMessageBytes = maximumMessageBytes
    }

    /// Parses `postgres://` or `postgresql://` URLs; see ``PostgresURLParser`` for what is accepted.
    public static func parse(_ text: String) throws(PostgresError) -> PostgresConfiguration {
        try PostgresURLParser.parse(text)
    }
}
