/// A request URL split into the parts OAuth 1.0a signs: the base string URI and the query.
///
/// Parsing is total: a URL the broker got wrong still produces a (wrong) signature that the
/// provider rejects, rather than a crash deep inside a request.
struct OAuth1RequestURL: Equatable {
    /// The scheme in lowercase, e.g. `https`.
    let scheme: String
    /// The host in lowercase, IPv6 literals keeping their brackets.
    let host: String
    /// The explicit port, or nil when the URL has none.
    let port: Int?
    /// The path exactly as written (percent-escapes kept), `/` when empty.
    let path: String
    /// The raw query after `?` and before any `#`, or nil.
    let query: String?

    /// Splits `url` into scheme, authority, path, query; the fragment and any user info are dropped.
    init(_ url: String) {
        var rest = Substring(url)
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        if let question = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: question)...])
            rest = rest[..<question]
        } else {
            query = nil
        }
        if let separator = rest.range(of: "://") {
            scheme = rest[..<separator.lowerBound].lowercased()
            rest = rest[separator.upperBound...]
        } else {
            scheme = ""
        }
        let pathStart = rest.firstIndex(of: "/") ?? rest.endIndex
        path = pathStart == rest.endIndex ? "/" : String(rest[pathStart...])
        var authority = rest[..<pathStart]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        let portSeparator: Substring.Index?
        if authority.hasPrefix("[") {
            // RFC 3986 §3.2.2: an IPv6 literal; a port can only follow the closing bracket.
            portSeparator = authority.firstIndex(of: "]").flatMap { close in
                authority[close...].firstIndex(of: ":")
            }
        } else {
            portSeparator = authority.lastIndex(of: ":")
        }
        if let colon = portSeparator, let number = Int(authority[authority.index(after: colon)...]) {
            host = authority[..<colon].lowercased()
            port = number
        } else {
            host = authority.lowercased()
            port = nil
        }
    }

    /// RFC 5849 §3.4.1.2: scheme and host lowercase, the port only when it is not the scheme's default, no query.
    var baseStringURI: String {
        let isDefaultPort =
            switch (scheme, port) {
            case (_, nil): true
            case ("http", 80), ("https", 443): true
            default: false
            }
        let authority = isDefaultPort ? host : "\(host):\(port!)"
        return "\(scheme)://\(authority)\(path)"
    }
}
