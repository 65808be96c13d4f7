import BrokerCore
import BrokerCrypto

/// Parses libpq's connection URIs: `postgres[ql]://[user[:password]@][host[:port][,host[:port]…]][/database][?options]`.
///
/// Options understood: `target_session_attrs` (`any`, `read-write`), `connect_timeout` (seconds, 0 = the
/// default), `application_name`, `sslmode` (`disable`; `require`, `verify-ca` and `verify-full`, all checked as
/// `verify-full`; `prefer` and `allow` mean plain TCP here, as libpq falls back to it), `sslrootcert`, `sslcert` and
/// `sslkey` (PEM files), and the
/// client's own `pool_size` and `statement_timeout` (seconds). An unknown option is refused, naming it, so a
/// typo never silently changes behaviour. `%XX` escapes are decoded in every part; the user information ends
/// at the last `@`. Errors never quote the password.
enum PostgresURLParser {
    /// The URL in `text`, or the reason it is not one.
    static func parse(_ text: String) throws(PostgresError) -> PostgresConfiguration {
        guard let schemeEnd = text.range(of: "://") else {
            throw .configuration("the URL does not start with postgres:// or postgresql://")
        }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "postgres" || scheme == "postgresql" else {
            throw .configuration("the scheme must be postgres:// or postgresql://")
        }
        var rest = text[schemeEnd.upperBound...]
        guard !rest.contains("#") else { throw .configuration("a fragment (#) is not allowed") }
        var query: Substring = ""
        var user: String?
        var password: Secret?
        // The user information ends at the last @ before the path, so a password may hold / ? or #-free text.
        if let at = rest.lastIndex(of: "@") {
            let info = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = info.firstIndex(of: ":") {
                user = try decode(info[..<colon], "the user name")
                guard let secret = PercentEncoding.percentDecode(String(info[info.index(after: colon)...]), plusIsSpace: false)
                else { throw .configuration("the password has a malformed %XX escape") }
                password = Secret(secret)
            } else {
                user = try decode(info, "the user name")
            }
        }
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var database: String?
        if let slash = rest.firstIndex(of: "/") {
            let path = rest[rest.index(after: slash)...]
            if !path.isEmpty { database = try decode(path, "the database name") }
            rest = rest[..<slash]
        }
        let endpoints = try endpointList(rest)
        guard let user, !user.isEmpty else { throw .configuration("the URL names no user (postgres://user:password@host/db)") }
        var configuration = PostgresConfiguration(endpoints: endpoints, user: user, password: password, database: database)
        try apply(query, to: &configuration)
        return configuration
    }

    /// `host[:port]` pairs separated by commas; an empty list means `localhost:5432`.
    private static func endpointList(_ text: Substring) throws(PostgresError) -> [PostgresConfiguration.Endpoint] {
        guard !text.isEmpty else { return [.init(host: "localhost")] }
        var endpoints: [PostgresConfiguration.Endpoint] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            endpoints.append(try endpoint(part))
        }
        return endpoints
    }

    /// One `host`, `host:port`, `[v6]` or `[v6]:port`.
    private static func endpoint(_ text: Substring) throws(PostgresError) -> PostgresConfiguration.Endpoint {
        var host: Substring
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw .configuration("an IPv6 host lacks its closing ]") }
            host = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw .configuration("unexpected text after an IPv6 host") }
                portText = after.dropFirst()
            }
        } else if let colon = text.firstIndex(of: ":") {
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        } else {
            host = text
        }
        let decoded = try decode(host, "a host")
        guard !decoded.isEmpty, decoded.allSatisfy({ $0.isLetter || $0.isNumber || ".-_:".contains($0) }) else {
            throw .configuration("a host is empty or malformed")
        }
        var port = 5432
        if let portText {
            guard let value = Int(portText), (1...65535).contains(value) else {
                throw .configuration("a port is not a number from 1 to 65535")
            }
            port = value
        }
        return .init(host: decoded, port: port)
    }

    /// Applies `name=value&…` options.
    private static func apply(_ query: Substring, to configuration: inout PostgresConfiguration) throws(PostgresError) {
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = try decode(parts[0], "an option name")
            let value = parts.count > 1 ? try decode(parts[1], "the value of \(name)") : ""
            switch name {
            case "target_session_attrs":
                guard let attributes = PostgresConfiguration.TargetSessionAttributes(rawValue: value) else {
                    throw .configuration("target_session_attrs must be any or read-write, not \(value)")
                }
                configuration.targetSessionAttributes = attributes
            case "connect_timeout":
                guard let seconds = Int(value), seconds >= 0 else { throw .configuration("connect_timeout must be whole seconds") }
                // libpq: 0 means wait indefinitely; here it means the default, and below 2 s is raised to 2 s as libpq does.
                if seconds > 0 { configuration.connectTimeout = Double(max(2, seconds)) }
            case "application_name":
                configuration.applicationName = value
            case "sslmode":
                switch value {
                case "disable", "allow", "prefer": configuration.sslMode = .disable
                case "require": configuration.sslMode = .require
                case "verify-ca": configuration.sslMode = .verifyCA
                case "verify-full": configuration.sslMode = .verifyFull
                default: throw .configuration("sslmode \(value) is not supported (disable, require, verify-ca or verify-full)")
                }
            case "sslrootcert":
                guard !value.isEmpty else { throw .configuration("sslrootcert must name a file") }
                configuration.sslRootCert = value
            case "sslcert":
                guard !value.isEmpty else { throw .configuration("sslcert must name a file") }
                configuration.sslCert = value
            case "sslkey":
                guard !value.isEmpty else { throw .configuration("sslkey must name a file") }
                configuration.sslKey = value
            case "pool_size":
                guard let size = Int(value), (1...1000).contains(size) else { throw .configuration("pool_size must be 1 to 1000") }
                configuration.poolSize = size
            case "statement_timeout":
                guard let seconds = Double(value), seconds > 0, seconds <= 86_400 else {
                    throw .configuration("statement_timeout must be seconds above 0")
                }
                configuration.statementTimeout = seconds
            default:
                throw .configuration("unknown option \(name)")
            }
        }
    }

    private static func decode(_ text: Substring, _ what: String) throws(PostgresError) -> String {
        guard let decoded = PercentEncoding.percentDecode(String(text), plusIsSpace: false) else {
            throw .configuration("\(what) has a malformed %XX escape")
        }
        return decoded
    }
}
