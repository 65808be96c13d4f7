import BrokerCore

/// Where the sentinels of a Redis primary are and how to log in to the primary: `redis-sentinel://[user:password@]host1:26379,host2:26379/mymaster[/db]`.
///
/// The primary's address is not in the URL: the sentinels are asked for it
/// (`SENTINEL get-master-addr-by-name`) when connecting, and again after a
/// connection fails or the server turns out to be a replica.
public struct RedisSentinelURL: Sendable, Equatable, CustomStringConvertible {
    /// The port sentinels listen on when the URL names none.
    public static let defaultPort = 26379

    /// One sentinel's address.
    public struct Address: Sendable, Equatable {
        /// A host name, an IPv4 address, or an IPv6 address without brackets.
        public var host: String
        /// The TCP port.
        public var port: Int

        /// Creates an address.
        public init(host: String, port: Int = RedisSentinelURL.defaultPort) {
            self.host = host
            self.port = port
        }

        /// `host:port`, with brackets around an IPv6 address.
        public var endpoint: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }
    }

    /// The sentinels, asked in this order.
    public var sentinels: [Address]
    /// The name the sentinels monitor the primary under (`sentinel monitor <name> …`).
    public var primaryName: String
    /// The ACL user for `AUTH` on the primary.
    public var username: String?
    /// The primary's password; sentinels are asked without one.
    public var password: Secret?
    /// The database chosen with `SELECT` on the primary.
    public var database: Int

    /// Creates a URL from its parts; `sentinels` must not be empty.
    public init(sentinels: [Address], primaryName: String, username: String? = nil, password: Secret? = nil, database: Int = 0) {
        precondition(!sentinels.isEmpty, "RedisSentinelURL: at least one sentinel")
        self.sentinels = sentinels
        self.primaryName = primaryName
        self.username = username
        self.password = password
        self.database = database
    }

    /// Parses `text`; see ``RedisURLParser`` for the accepted forms and each refusal.
    public init(parsing text: String) throws(RedisURLError) {
        self = try RedisURLParser.parseSentinel(text)
    }

    /// The URL of the primary at `host:port`, with this URL's credentials and database.
    public func primary(host: String, port: Int) -> RedisURL {
        RedisURL(host: host, port: port, username: username, password: password, database: database)
    }

    /// The URL of one sentinel: no credentials, database 0 (sentinels have no databases).
    func sentinel(_ address: Address) -> RedisURL {
        RedisURL(host: address.host, port: address.port)
    }

    /// The URL with the password replaced by `<redacted>`.
    public var description: String {
        var text = "redis-sentinel://"
        switch (username, password) {
        case (nil, nil): break
        case (let user?, nil): text += "\(user)@"
        case (let user, _?): text += "\(user ?? ""):<redacted>@"
        }
        return text + sentinels.map(\.endpoint).joined(separator: ",") + "/" + primaryName + (database == 0 ? "" : "/\(database)")
    }
}

/// The Redis a store lives in: one server, or the primary a set of sentinels names.
public enum RedisLocation: Sendable, Equatable, CustomStringConvertible {
    /// One server at a fixed address (`redis://`).
    case server(RedisURL)
    /// The primary the sentinels name, followed through failovers (`redis-sentinel://`).
    case sentinel(RedisSentinelURL)

    /// Parses `redis://…`, `rediss://…` or `redis-sentinel://…`.
    public init(parsing text: String) throws(RedisURLError) {
        if text.lowercased().hasPrefix("redis-sentinel://") {
            self = .sentinel(try RedisSentinelURL(parsing: text))
        } else {
            self = .server(try RedisURL(parsing: text))
        }
    }

    /// Whether connections use TLS (`rediss://`).
    public var usesTLS: Bool {
        if case .server(let url) = self { return url.tls != nil }
        return false
    }

    /// This location with `tls` as its TLS settings when it uses TLS; a `redis://` or Sentinel location is returned as it is.
    public func configuringTLS(_ tls: RedisTLS) -> RedisLocation {
        guard case .server(var url) = self, url.tls != nil else { return self }
        url.tls = tls
        return .server(url)
    }

    /// The URL with its password redacted.
    public var description: String {
        switch self {
        case .server(let url): return url.description
        case .sentinel(let url): return url.description
        }
    }
}
