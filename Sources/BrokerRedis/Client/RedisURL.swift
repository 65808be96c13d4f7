import BrokerCore

/// Where a Redis server is and how to log in: parsed from `redis://[user:password@]host:port[/db]`, or `rediss://` for TLS.
///
/// The password is a ``Secret``, so printing a URL (or an error about one)
/// never shows it: `description` reads `redis://user:<redacted>@host:6379/2`.
public struct RedisURL: Sendable, Equatable, CustomStringConvertible {
    /// The port Redis listens on when the URL names none.
    public static let defaultPort = 6379

    /// A host name, an IPv4 address, or an IPv6 address without brackets.
    public var host: String
    /// The TCP port, 1 to 65535.
    public var port: Int
    /// The ACL user for `AUTH user password`; nil sends `AUTH password` (the `default` user).
    public var username: String?
    /// The password for `AUTH`; nil sends no `AUTH`.
    public var password: Secret?
    /// The logical database chosen with `SELECT` after connecting; 0 sends no `SELECT`.
    public var database: Int
    /// TLS settings for `rediss://`; nil speaks plain TCP (`redis://`).
    public var tls: RedisTLS?

    /// Creates a URL from its parts.
    public init(
        host: String, port: Int = RedisURL.defaultPort, username: String? = nil, password: Secret? = nil, database: Int = 0,
        tls: RedisTLS? = nil
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.tls = tls
    }

    /// Parses `text`; see ``RedisURLParser`` for the accepted forms and each refusal.
    public init(parsing text: String) throws(RedisURLError) {
        self = try RedisURLParser.parse(text)
    }

    /// `host:port`, with brackets around an IPv6 address, for messages.
    public var endpoint: String {
        (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
    }

    /// The URL with the password replaced by `<redacted>`.
    public var description: String {
        var text = tls == nil ? "redis://" : "rediss://"
        switch (username, password) {
        case (nil, nil): break
        case (let user?, nil): text += "\(user)@"
        case (let user, _?): text += "\(user ?? ""):<redacted>@"
        }
        return text + endpoint + (database == 0 ? "" : "/\(database)")
    }
}
