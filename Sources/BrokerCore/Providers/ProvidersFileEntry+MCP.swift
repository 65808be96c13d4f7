import Foundation

extension ProvidersFileEntry {
    /// The keys only an `mcp` entry has.
    static let mcpKeys: Set<String> = ["server", "client_name"]

    /// The keys an `mcp` entry may not have: its endpoints and issuer come from the server's protected resource metadata
    /// and its authorization server's metadata, its API base is the server.
    static let mcpRefusedKeys: Set<String> = oidcRefusedKeys.union(["issuer", "token_endpoint_auth_method"])

    /// The longest `client_name` registered.
    static let maximumClientNameBytes = 200

    /// A remote MCP server before its entry's keys apply: PKCE always (the MCP authorization specification requires
    /// S256), no scopes unless the entry or the server's metadata names them.
    static func customMCP(named name: String) -> ProviderConfiguration {
        var c = ProviderConfiguration(name: name, kind: .mcp, pkce: true, clientAuthentication: .publicClient)
        c.userIDFields = []
        return c
    }

    /// For an `mcp` provider: reads `server` and `client_name`, refuses the keys discovery decides, and makes the
    /// server the API base the proxy calls. `server` is `https`, or `http` where `api_allow_private` lets the broker
    /// reach a server on the operator's own network (a test fake on 127.0.0.1).
    func applyMCP(to c: inout ProviderConfiguration) throws(ProviderConfigurationError) {
        guard c.kind == .mcp else {
            if let key = settings.keys.sorted().first(where: Self.mcpKeys.contains) {
                throw failure(key, "applies to an mcp provider only; this one is \(c.kind.rawValue)")
            }
            return
        }
        if let key = settings.keys.sorted().first(where: Self.mcpRefusedKeys.contains) {
            throw failure(
                key,
                "does not apply to an mcp provider: its endpoints and registration come from the server's metadata (RFC 9728, RFC 8414)")
        }
        guard let server = try string("server") else {
            throw failure("server", "missing; an mcp provider needs the server's URL, such as https://mcp.example.com/mcp")
        }
        if let problem = Self.mcpServerProblem(server, allowingHTTP: c.apiAllowPrivate) { throw failure("server", problem) }
        c.mcpServer = server
        c.apiBaseURL = server
        c.pkce = true
        if settings["pkce"] != nil, try bool("pkce") == false {
            throw failure("pkce", "an mcp provider always uses PKCE S256 (MCP authorization, security considerations)")
        }
        // A pre-registered client (the first of MCP's registration options) authenticates with its secret.
        c.clientAuthentication = c.clientSecret == nil ? .publicClient : .clientSecretBasic
        if settings["client_secret"] != nil, settings["client_id"] == nil {
            throw failure("client_secret", "needs client_id: a pre-registered client gives both")
        }
        if let name = try string("client_name") {
            guard !name.isEmpty, name.utf8.count <= Self.maximumClientNameBytes, name.unicodeScalars.allSatisfy({ $0.value >= 0x20 })
            else { throw failure("client_name", "must be 1 to \(Self.maximumClientNameBytes) bytes without control characters") }
            c.mcpClientName = name
        }
    }

    /// Why `server` cannot be a remote MCP server's URL, or nil: an absolute `https` URL (or `http` when
    /// `allowingHTTP`) with a host, no userinfo, query or fragment and no trailing `/`, the canonical form RFC 8707
    /// §2 asks of a `resource` and RFC 9728 §3.3 compares byte for byte.
    static func mcpServerProblem(_ server: String, allowingHTTP: Bool) -> String? {
        do throws(ProxyTarget.Failure) {
            _ = try ProxyTarget.Base(server, allowingHTTP: allowingHTTP)
        } catch {
            switch error {
            case .invalidBase(let reason), .refused(let reason): return reason
            }
        }
        guard let parsed = URLComponents(string: server), let host = parsed.host, host == host.lowercased() else {
            return "must have a lowercase host (the canonical form of RFC 8707 §2)"
        }
        if server.hasSuffix("/") { return "must not end with / (the canonical form of RFC 8707 §2)" }
        if server.utf8.count > OIDCProviderMetadata.maximumURLBytes {
            return "must be at most \(OIDCProviderMetadata.maximumURLBytes) bytes"
        }
        return nil
    }
}
