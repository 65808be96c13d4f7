import Foundation

/// What the broker reads from a remote MCP server and its authorization server, checked where it enters: the
/// `401` challenge (RFC 9728 §5.1), the protected resource metadata (RFC 9728 §2, §3.3) and the well-known URLs of
/// both documents (RFC 9728 §3.1, RFC 8414 §3.1).
///
/// Everything here is hostile input: documents are read up to ``OIDCProviderMetadata/maximumDocumentBytes``,
/// URLs up to ``OIDCProviderMetadata/maximumURLBytes`` of visible ASCII, `https` unless the operator let the
/// server be reached on a private network (`api_allow_private`, which then allows `http` too).
public enum MCPServerMetadata {
    /// What a protected resource metadata document says, once checked.
    public struct ProtectedResource: Sendable, Equatable {
        /// `resource`, equal to the server URL (RFC 9728 §3.3).
        public var resource: String
        /// `authorization_servers[0]`, the issuer the broker uses.
        public var authorizationServer: String
        /// `scopes_supported`, when given.
        public var scopesSupported: [String]?
    }

    /// The most scopes read from `scopes_supported` or a challenge's `scope`.
    static let maximumScopes = 100
    /// The longest scope read.
    static let maximumScopeBytes = 256

    /// The `resource_metadata` and `scope` of a `Bearer` challenge in `header` (RFC 9728 §5.1, RFC 6750 §3), each nil
    /// when absent or malformed.
    public static func challenge(_ header: String?) -> (resourceMetadata: String?, scope: String?) {
        guard let header, header.utf8.count <= 8192 else { return (nil, nil) }
        let params = authParameters(header)
        return (params["resource_metadata"], params["scope"])
    }

    /// The auth-params of the first `Bearer` challenge in a `WWW-Authenticate` value (RFC 9110 §11.2): lowercased names
    /// to values, quoted strings unquoted (`\` escapes one character); the first of each name wins.
    static func authParameters(_ header: String) -> [String: String] {
        let chars = Array(header.unicodeScalars)
        var i = 0
        func skipSpace() { while i < chars.count, chars[i] == " " || chars[i] == "\t" { i += 1 } }
        func token() -> String {
            var out = ""
            while i < chars.count, chars[i] != "=", chars[i] != ",", chars[i] != " ", chars[i] != "\t", chars[i] != "\"" {
                out.unicodeScalars.append(chars[i])
                i += 1
            }
            return out
        }
        skipSpace()
        guard token().lowercased() == "bearer" else { return [:] }
        var params: [String: String] = [:]
        while i < chars.count {
            skipSpace()
            while i < chars.count, chars[i] == "," || chars[i] == " " { i += 1 }
            let name = token().lowercased()
            skipSpace()
            guard !name.isEmpty, i < chars.count, chars[i] == "=" else {
                // Another challenge (its scheme, then a space) or malformed text: stop at what was read.
                break
            }
            i += 1
            skipSpace()
            var value = ""
            if i < chars.count, chars[i] == "\"" {
                i += 1
                var closed = false
                while i < chars.count {
                    if chars[i] == "\\", i + 1 < chars.count {
                        value.unicodeScalars.append(chars[i + 1])
                        i += 2
                    } else if chars[i] == "\"" {
                        i += 1
                        closed = true
                        break
                    } else {
                        value.unicodeScalars.append(chars[i])
                        i += 1
                    }
                }
                guard closed else { break }
            } else {
                value = token()
            }
            if params[name] == nil { params[name] = value }
        }
        return params
    }

    /// Why `url` cannot be fetched or used as a discovered URL, or nil: an absolute `https` URL (`http` too when
    /// `allowingHTTP`) with a host and no userinfo or fragment, of visible ASCII and at most the URL cap.
    public static func urlProblem(_ url: String, allowingHTTP: Bool, query: Bool = true) -> String? {
        guard !url.isEmpty, url.utf8.count <= OIDCProviderMetadata.maximumURLBytes, url.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }),
            let parsed = URLComponents(string: url), let host = parsed.host, !host.isEmpty, parsed.fragment == nil,
            parsed.user == nil, parsed.password == nil
        else { return "is not an absolute URL with a host and no userinfo or fragment" }
        if !query, parsed.query != nil { return "has a query" }
        switch parsed.scheme?.lowercased() {
        case "https": return nil
        case "http" where allowingHTTP: return nil
        default: return allowingHTTP ? "is not an https or http URL" : "is not an https URL"
        }
    }

    /// The well-known URL of `identifier` for `suffix` (RFC 9728 §3.1, RFC 8414 §3.1): the suffix inserted between
    /// the host and the path, the path's trailing `/` dropped; `identifier` has no query or fragment.
    static func wellKnown(_ identifier: String, _ suffix: String) -> String? {
        guard let parsed = URLComponents(string: identifier), let scheme = parsed.scheme, let host = parsed.host else { return nil }
        var origin = scheme + "://" + (host.contains(":") ? "[\(host)]" : host)
        if let port = parsed.port { origin += ":\(port)" }
        var path = parsed.percentEncodedPath
        while path.hasSuffix("/") { path.removeLast() }
        return origin + "/.well-known/" + suffix + path
    }

    /// Where to look for the server's protected resource metadata without a challenge, in order: the path-inserted
    /// form, then the root form (MCP authorization, RFC 9728 §3.1).
    public static func protectedResourceURLs(server: String) -> [String] {
        var urls: [String] = []
        for candidate in [wellKnown(server, "oauth-protected-resource"), rootWellKnown(server, "oauth-protected-resource")] {
            if let candidate, !urls.contains(candidate) { urls.append(candidate) }
        }
        return urls
    }

    /// Where to look for the authorization server's metadata, in order (RFC 8414 §3.1, then OpenID Connect Discovery):
    /// `/.well-known/oauth-authorization-server` path-inserted, `/.well-known/openid-configuration` path-inserted, and
    /// for an issuer with a path, `<issuer>/.well-known/openid-configuration`.
    public static func authorizationServerURLs(issuer: String) -> [String] {
        var urls: [String] = []
        let appended = OIDCProviderMetadata.documentURL(issuer: issuer)
        for candidate in [wellKnown(issuer, "oauth-authorization-server"), wellKnown(issuer, "openid-configuration"), appended] {
            if let candidate, !urls.contains(candidate) { urls.append(candidate) }
        }
        return urls
    }

    /// `/.well-known/<suffix>` at the root of `identifier`'s origin.
    static func rootWellKnown(_ identifier: String, _ suffix: String) -> String? {
        guard let parsed = URLComponents(string: identifier), let scheme = parsed.scheme, let host = parsed.host else { return nil }
        var origin = scheme + "://" + (host.contains(":") ? "[\(host)]" : host)
        if let port = parsed.port { origin += ":\(port)" }
        return origin + "/.well-known/" + suffix
    }

    /// The protected resource metadata in `bytes` for `server`, or why it is refused.
    ///
    /// RFC 9728 §3.3: `resource` must equal the server URL the document was looked up for, byte for byte (which, for a
    /// URL from a challenge, is the URL the broker called). `authorization_servers` must be a non-empty list (MCP
    /// authorization); the first is taken and must be an issuer URL of the allowed schemes without query or fragment.
    public static func protectedResource(_ bytes: [UInt8], server: String, allowingHTTP: Bool) -> Result<
        ProtectedResource, OIDCDocumentProblem
    > {
        guard bytes.count <= OIDCProviderMetadata.maximumDocumentBytes else {
            return .failure(
                OIDCDocumentProblem("the protected resource metadata is larger than \(OIDCProviderMetadata.maximumDocumentBytes) bytes"))
        }
        guard case .object(let fields) = ResponseBody(bytes).parse(acceptForm: false) else {
            return .failure(OIDCDocumentProblem("the protected resource metadata is not a JSON object"))
        }
        guard let resource = fields["resource"] as? String, ExactKey.same(resource, server) else {
            return .failure(OIDCDocumentProblem("the protected resource metadata's resource is not the server URL (RFC 9728 §3.3)"))
        }
        guard let servers = fields["authorization_servers"] as? [Any], let first = servers.first as? String else {
            return .failure(OIDCDocumentProblem("the protected resource metadata names no authorization_servers"))
        }
        if let problem = urlProblem(first, allowingHTTP: allowingHTTP, query: false) {
            return .failure(OIDCDocumentProblem("authorization_servers[0] \(problem)"))
        }
        var scopes: [String]?
        if let raw = fields["scopes_supported"], !(raw is NSNull) {
            guard let list = raw as? [Any], list.count <= maximumScopes,
                let names = list.map({ $0 as? String }) as? [String], names.allSatisfy(isScope)
            else {
                return .failure(OIDCDocumentProblem("scopes_supported is not a list of at most \(maximumScopes) scopes"))
            }
            scopes = names
        }
        return .success(ProtectedResource(resource: resource, authorizationServer: first, scopesSupported: scopes))
    }

    /// The scopes of a challenge's space-separated `scope`, nil when absent or not all valid scopes (RFC 6749 §3.3).
    static func scopes(_ text: String?) -> [String]? {
        guard let text else { return nil }
        let names = text.split(separator: " ").map(String.init)
        guard !names.isEmpty, names.count <= maximumScopes, names.allSatisfy(isScope) else { return nil }
        return names
    }

    /// Whether `name` is a scope token (RFC 6749 §3.3: `%x21 / %x23-5B / %x5D-7E`) of at most the cap.
    static func isScope(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= maximumScopeBytes
            && name.utf8.allSatisfy { $0 == 0x21 || (0x23...0x5B).contains($0) || (0x5D...0x7E).contains($0) }
    }
}
