import Foundation

/// The origins a flow may send the browser back to; anything else is refused, so the broker is no open redirector.
///
/// RFC 6749 §10.15 and RFC 9700 §4.11.1: a `return_to` must be an absolute
/// http(s) URL whose scheme, host and port equal an allowed origin exactly.
/// Relative and scheme-relative forms (`//evil.com`, `/\evil.com`), userinfo,
/// backslashes, percent signs in the host, whitespace and control characters
/// (CR/LF) and other schemes (`javascript:`) never pass. Hosts compare
/// case-insensitively; `:443` equals no port for https.
public struct ReturnToAllowlist: Sendable {
    /// A scheme, lowercase host and effective port.
    public struct Origin: Sendable, Hashable, CustomStringConvertible {
        /// `http` or `https`.
        public let scheme: String
        /// The host, lowercased; an IPv6 literal keeps its brackets.
        public let host: String
        /// The port, the scheme's default when none was written.
        public let port: Int

        /// For example `https://app.example` or `http://localhost:3000`.
        public var description: String {
            let isDefault = (scheme == "https" && port == 443) || (scheme == "http" && port == 80)
            return "\(scheme)://\(host)" + (isDefault ? "" : ":\(port)")
        }
    }

    /// The allowed origins.
    public let origins: Set<Origin>

    /// Allows the origins in `entries` (e.g. `https://app.example`); an entry that is not a bare origin is ignored.
    public init(_ entries: [String]) {
        origins = Set(entries.compactMap(Self.origin(ofEntry:)))
    }

    /// The origin an allowlist entry names, or nil when it is not `scheme://host[:port]` with an optional trailing `/`.
    public static func origin(ofEntry entry: String) -> Origin? {
        guard let (origin, rest) = split(entry), rest.isEmpty || rest == "/" else { return nil }
        return origin
    }

    /// Whether `value` is an absolute URL on an allowed origin and free of every open-redirect trick.
    public func allows(_ value: String) -> Bool {
        guard value.utf8.count <= 2048, let (origin, _) = Self.split(value), origins.contains(origin) else { return false }
        // A second parser must agree on the host, so no parser differential can smuggle another one through.
        guard let components = URLComponents(string: value), components.user == nil, components.password == nil,
            let host = components.host?.lowercased(), host == origin.host || "[\(host)]" == origin.host
        else { return false }
        return true
    }

    /// Splits an absolute http(s) URL into its origin and the rest (path, query, fragment), or nil when it is not one.
    static func split(_ value: String) -> (Origin, Substring)? {
        // Only visible ASCII: this refuses CR, LF, tab, space, NUL, DEL and raw non-ASCII in one rule.
        guard !value.isEmpty, value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }), !value.contains("\\") else { return nil }
        guard let separator = value.range(of: "://") else { return nil }
        let scheme = value[..<separator.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        let afterScheme = value[separator.upperBound...]
        let authorityEnd = afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? afterScheme.endIndex
        let authority = afterScheme[..<authorityEnd]
        guard !authority.isEmpty, !authority.contains("@"), !authority.contains("%") else { return nil }
        guard let (host, port) = hostAndPort(authority, defaultPort: scheme == "https" ? 443 : 80) else { return nil }
        return (Origin(scheme: scheme, host: host, port: port), afterScheme[authorityEnd...])
    }

    /// The lowercased host and the port of `authority`, or nil when either is malformed.
    private static func hostAndPort(_ authority: Substring, defaultPort: Int) -> (String, Int)? {
        let host: Substring
        let portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[...close]
            let after = authority[authority.index(after: close)...]
            guard after.isEmpty || after.hasPrefix(":") else { return nil }
            portText = after.isEmpty ? nil : after.dropFirst()
            guard host.dropFirst().dropLast().allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return nil }
        } else {
            let parts = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            host = parts[0]
            portText = parts.count == 2 ? parts[1] : nil
            let hostIsPlain = host.allSatisfy { ($0.isASCII && $0.isLetter) || ("0"..."9").contains($0) || $0 == "-" || $0 == "." }
            guard hostIsPlain, !host.hasPrefix("."), !host.hasSuffix("."), !host.contains("..") else { return nil }
        }
        guard host.count > (authority.hasPrefix("[") ? 2 : 0) else { return nil }
        var port = defaultPort
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ ("0"..."9").contains($0) }),
                let parsed = Int(portText), (1...65535).contains(parsed)
            else { return nil }
            port = parsed
        }
        return (host.lowercased(), port)
    }
}
