import BrokerCore
import BrokerCrypto

/// Parses `redis://[user:password@]host:port[/db]` into a ``RedisURL``.
///
/// Accepted: `redis://host`, `redis://host:6379`, `redis://host:6379/2`,
/// `redis://:password@host:6379` (the `default` user), `redis://user:password@[::1]:6379/0`,
/// and each of them as `rediss://` (TLS, with the system's trust store until
/// ``RedisLocation/configuringTLS(_:)`` adds a CA or a client certificate).
/// The user information ends at the last `@`, so a password may hold `/`, `?`
/// or `#`; `%XX` escapes in it are decoded (write `%40` for `@` before the host,
/// `%25` for `%`). Refused, with a reason that never quotes the password:
/// another scheme (`rediss-sentinel://` among them: sentinels over TLS are not supported), user
/// information without `:`, an empty password, an empty or malformed host, a port
/// outside 1–65535, a database that is not a number, a query or fragment.
enum RedisURLParser {
    /// The largest database index accepted; Redis itself refuses an index past its `databases` setting.
    static let maximumDatabase = 1_000_000

    /// The URL in `text`, or the reason it is not one.
    static func parse(_ text: String) throws(RedisURLError) -> RedisURL {
        guard let schemeEnd = text.range(of: "://") else {
            throw RedisURLError("it does not start with redis://")
        }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "redis" || scheme == "rediss" else {
            if scheme == "rediss-sentinel" {
                throw RedisURLError(
                    "rediss-sentinel:// (sentinels over TLS) is not supported; use redis-sentinel:// with a TLS proxy beside the broker (docs/deployment.md, \"Redis over TLS\"), or rediss:// to one server"
                )
            }
            throw RedisURLError("the scheme must be redis:// or rediss://")
        }
        let rest = text[schemeEnd.upperBound...]
        var url = RedisURL(host: "", tls: scheme == "rediss" ? RedisTLS() : nil)
        var location = rest
        if let at = rest.lastIndex(of: "@") {
            (url.username, url.password) = try userInfo(rest[..<at])
            location = rest[rest.index(after: at)...]
        }
        let path: Substring
        if let slash = location.firstIndex(of: "/") {
            path = location[location.index(after: slash)...]
            location = location[..<slash]
        } else {
            path = ""
        }
        guard !location.contains("?"), !location.contains("#"), !path.contains("?"), !path.contains("#") else {
            throw RedisURLError("query parameters and fragments are not supported")
        }
        (url.host, url.port) = try hostAndPort(location)
        url.database = try database(path)
        return url
    }

    /// The user and password before `@`: `user:password` or `:password`.
    private static func userInfo(_ info: Substring) throws(RedisURLError) -> (String?, Secret?) {
        guard let colon = info.firstIndex(of: ":") else {
            throw RedisURLError("the part before @ must be user:password or :password")
        }
        let rawUser = info[..<colon]
        let rawPassword = info[info.index(after: colon)...]
        guard let user = PercentEncoding.percentDecode(String(rawUser), plusIsSpace: false) else {
            throw RedisURLError("the user name has an invalid % escape")
        }
        guard let password = PercentEncoding.percentDecode(String(rawPassword), plusIsSpace: false) else {
            throw RedisURLError("the password has an invalid % escape (write % as %25)")
        }
        guard !password.isEmpty else { throw RedisURLError("the password is empty") }
        return (user.isEmpty ? nil : user, Secret(password))
    }

    /// The host and port of `host`, `host:port`, `[v6]` or `[v6]:port`; `defaultPort` when none is given.
    private static func hostAndPort(_ location: Substring, defaultPort: Int = RedisURL.defaultPort) throws(RedisURLError) -> (String, Int) {
        let host: Substring
        var portText: Substring?
        if location.hasPrefix("[") {
            guard let close = location.firstIndex(of: "]") else {
                throw RedisURLError("the IPv6 address has no closing ]")
            }
            host = location[location.index(after: location.startIndex)..<close]
            let after = location[location.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw RedisURLError("unexpected text after the IPv6 address") }
                portText = after.dropFirst()
            }
            guard !host.isEmpty, host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                throw RedisURLError("the IPv6 address \"\(host)\" is malformed")
            }
        } else {
            if let colon = location.firstIndex(of: ":") {
                host = location[..<colon]
                portText = location[location.index(after: colon)...]
            } else {
                host = location
            }
            guard !host.isEmpty else { throw RedisURLError("the host is empty") }
            guard host.utf8.allSatisfy(isHostByte) else {
                throw RedisURLError("the host \"\(host)\" has characters a host name cannot have")
            }
        }
        guard let portText else { return (String(host), defaultPort) }
        guard portText.count <= 5, portText.utf8.allSatisfy(isDigit), let port = Int(portText), (1...65535).contains(port) else {
            throw RedisURLError("the port \"\(portText)\" is not a number from 1 to 65535")
        }
        return (String(host), port)
    }

    /// The Sentinel form in `text`: `redis-sentinel://[user:password@]host1:26379,host2:26379/mymaster[/db]`.
    ///
    /// The user and password are those of the data nodes (the primary);
    /// sentinels are asked without them. Each sentinel is `host`, `host:port`
    /// or `[v6]:port`, port 26379 when none is given. The primary's name is 1 to
    /// 128 letters, digits, `.`, `_` or `-`. Refused like `redis://` otherwise.
    static func parseSentinel(_ text: String) throws(RedisURLError) -> RedisSentinelURL {
        guard let schemeEnd = text.range(of: "://"), text[..<schemeEnd.lowerBound].lowercased() == "redis-sentinel" else {
            throw RedisURLError("it does not start with redis-sentinel://")
        }
        let rest = text[schemeEnd.upperBound...]
        var username: String?
        var password: Secret?
        var location = rest
        if let at = rest.lastIndex(of: "@") {
            (username, password) = try userInfo(rest[..<at])
            location = rest[rest.index(after: at)...]
        }
        guard !location.contains("?"), !location.contains("#") else {
            throw RedisURLError("query parameters and fragments are not supported")
        }
        let parts = location.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3 else {
            throw RedisURLError("a Sentinel URL is redis-sentinel://host:26379[,host:26379…]/primary-name[/db]")
        }
        guard !parts[0].isEmpty else { throw RedisURLError("no sentinel address is given") }
        var sentinels: [RedisSentinelURL.Address] = []
        for entry in parts[0].split(separator: ",", omittingEmptySubsequences: false) {
            guard !entry.isEmpty else { throw RedisURLError("a sentinel address is empty (a stray comma?)") }
            let (host, port) = try hostAndPort(entry, defaultPort: RedisSentinelURL.defaultPort)
            sentinels.append(RedisSentinelURL.Address(host: host, port: port))
        }
        let name = parts[1]
        guard (1...128).contains(name.utf8.count),
            name.utf8.allSatisfy({
                isDigit($0) || ($0 | 0x20 >= UInt8(ascii: "a") && $0 | 0x20 <= UInt8(ascii: "z"))
                    || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_")
            })
        else {
            throw RedisURLError("the primary's name \"\(name)\" must be 1 to 128 letters, digits, '.', '_' or '-'")
        }
        let database = try parts.count == 3 ? self.database(parts[2]) : 0
        return RedisSentinelURL(
            sentinels: sentinels, primaryName: String(name), username: username,
            password: password, database: database)
    }

    /// The database number after `/`; empty means 0.
    private static func database(_ path: Substring) throws(RedisURLError) -> Int {
        if path.isEmpty { return 0 }
        guard path.count <= 7, path.utf8.allSatisfy(isDigit), let number = Int(path), number <= maximumDatabase else {
            throw RedisURLError("the database \"\(path)\" is not a number from 0 to \(maximumDatabase)")
        }
        return number
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// Letters, digits, `-`, `.` and `_`: what DNS names and IPv4 addresses are made of.
    private static func isHostByte(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
    }
}
