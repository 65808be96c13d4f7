import Foundation

extension ProvidersFileEntry {
    /// The providers-file keys that describe how an OAuth 2.0 provider bends RFC 6749: the catalogue's quirks as data.
    static let oauth2Keys: Set<String> = [
        "token_request_format", "token_path", "token_user_id_field", "token_user_name_field", "user_name_field",
        "user_auth_scheme", "user_request_body", "user_introspection", "refresh_url", "refresh_token_rotates",
        "scope_param", "revoke_request_format", "revoke_token", "request_headers", "resource_urls",
        "device_authorization_url", "device_allow_http",
    ]

    /// Header fields `request_headers` may not set: the broker writes them for every call, or the transport does.
    static let reservedHeaders: Set<String> = [
        "authorization", "content-type", "content-length", "host", "transfer-encoding", "connection", "accept-encoding",
        "cookie", "te", "upgrade", "expect", "proxy-authorization", "trailer", "keep-alive",
    ]

    /// Reads the OAuth 2.0 quirk keys into the configuration; each is refused on another kind, since nothing would read it.
    func applyOAuth2(to c: inout ProviderConfiguration) throws(ProviderConfigurationError) {
        let present = Self.oauth2Keys.filter { settings[$0] != nil }.sorted()
        guard !present.isEmpty else { return }
        if c.kind != .oauth2, c.kind != .oidc, let key = present.first {
            throw failure(key, "applies to oauth2 providers only; this one is \(c.kind.rawValue)")
        }
        if settings["token_request_format"] != nil { c.tokenRequestFormat = try choice("token_request_format", default: .form) }
        if settings["token_path"] != nil { c.tokenAnswer.tokensAt = try path("token_path") }
        // JSON null says the token answer never names the user, overriding a preset that reads it there.
        if settings["token_user_id_field"] != nil { c.tokenAnswer.userIDFields = try paths("token_user_id_field") ?? [] }
        if settings["token_user_name_field"] != nil { c.tokenAnswer.userNameField = try path("token_user_name_field") }
        if settings["user_name_field"] != nil { c.userRequest.userNameField = try path("user_name_field") }
        if settings["user_auth_scheme"] != nil { c.userRequest.authScheme = try authScheme("user_auth_scheme") ?? "Bearer" }
        if settings["user_request_body"] != nil { c.userRequest.jsonBody = try jsonBody("user_request_body") }
        if let value = try bool("user_introspection") { c.userRequest.introspection = value }
        if settings["refresh_url"] != nil { c.refreshURL = try url("refresh_url") }
        if let value = try bool("refresh_token_rotates") { c.refreshTokenRotates = value }
        if settings["scope_param"] != nil { c.scopeParameter = try scopeParameter() }
        if settings["revoke_request_format"] != nil { c.revocationStyle = try choice("revoke_request_format", default: .form) }
        if settings["revoke_token"] != nil { c.revokesAccessToken = try revokedToken() }
        if settings["request_headers"] != nil { c.requestHeaders = try requestHeaders() }
        if settings["resource_urls"] != nil { c.resourceLookups = try resourceLookups() }
        if settings["device_authorization_url"] != nil { c.deviceAuthorizationURL = try url("device_authorization_url") }
        if let value = try bool("device_allow_http") { c.deviceAllowHTTP = value }
        if c.extraAuthorizeParameters.contains(where: { $0.0 == c.scopeParameter }) {
            throw failure("authorize_params", "may not set \"\(c.scopeParameter)\"; the broker sends the scopes in it")
        }
    }

    /// `revoke_client_auth`: `true` (the token endpoint's client authentication), `false` (none) or `"client_id"` (the id alone).
    func applyRevokeClientAuth(to c: inout ProviderConfiguration) throws(ProviderConfigurationError) {
        if settings["revoke_client_auth"] as? String == "client_id" {
            c.revokeAuthenticatesClient = false
            c.revokeSendsClientID = true
            return
        }
        guard let value = try? bool("revoke_client_auth") else {
            throw failure("revoke_client_auth", "must be true, false or \"client_id\"")
        }
        c.revokeAuthenticatesClient = value
        c.revokeSendsClientID = false
    }

    /// One of `Choice`'s raw values at `key`; `fallback` for JSON null.
    func choice<Choice: RawRepresentable & CaseIterable>(_ key: String, default fallback: Choice) throws(ProviderConfigurationError)
        -> Choice
    where Choice.RawValue == String {
        guard let text = try string(key) else { return fallback }
        guard let parsed = Choice(rawValue: text) else {
            throw failure(key, "expected " + Choice.allCases.map(\.rawValue).joined(separator: ", ").replacingLastComma(with: " or "))
        }
        return parsed
    }

    /// The JSON path at `key`; nil when JSON null.
    func path(_ key: String) throws(ProviderConfigurationError) -> String? {
        guard let text = try string(key) else { return nil }
        if let problem = ProviderJSONPath.problem(with: text) { throw failure(key, problem) }
        return text
    }

    /// One JSON path, or an array of 1–4 whose values are joined with `:` into one id; nil when JSON null.
    func paths(_ key: String) throws(ProviderConfigurationError) -> [String]? {
        guard let raw = settings[key], !(raw is NSNull) else { return nil }
        if raw is String { return try path(key).map { [$0] } }
        guard let list = raw as? [Any], (1...4).contains(list.count) else {
            throw failure(key, "must be a JSON path or an array of 1 to 4 JSON paths")
        }
        var paths: [String] = []
        for item in list {
            guard let text = item as? String else { throw failure(key, "must be a JSON path or an array of 1 to 4 JSON paths") }
            if let problem = ProviderJSONPath.problem(with: text) { throw failure(key, problem) }
            paths.append(text)
        }
        return paths
    }

    /// An `Authorization` scheme word: 1–32 letters (RFC 9110 §11.1 `auth-scheme`, kept to letters).
    func authScheme(_ key: String) throws(ProviderConfigurationError) -> String? {
        guard let text = try string(key) else { return nil }
        guard (1...32).contains(text.utf8.count), text.unicodeScalars.allSatisfy({ $0.isASCII && $0.properties.isAlphabetic }) else {
            throw failure(key, "must be a scheme word of 1 to 32 letters, such as Bearer or OAuth")
        }
        return text
    }

    /// A JSON object text of at most 4 KiB, sent as it is; nil when JSON null.
    func jsonBody(_ key: String) throws(ProviderConfigurationError) -> String? {
        guard let text = try string(key) else { return nil }
        guard text.utf8.count <= 4096, (try? JSONSerialization.jsonObject(with: Data(text.utf8))) is [String: Any] else {
            throw failure(key, "must be the text of a JSON object of at most 4096 bytes")
        }
        return text
    }

    /// `scope_param`: `scope`, or a plain parameter name the broker does not set itself.
    func scopeParameter() throws(ProviderConfigurationError) -> String {
        guard let name = try parameterName("scope_param") else { return "scope" }
        guard name == "scope" || !ProvidersFile.reservedAuthorizeParameters.contains(name) else {
            throw failure("scope_param", "may not be \"\(name)\"; the broker sets it")
        }
        return name
    }

    /// `revoke_token`: whether revocation names the access token (`access_token`) or prefers the refresh token (`refresh_token`).
    func revokedToken() throws(ProviderConfigurationError) -> Bool {
        switch try string("revoke_token") {
        case nil, "refresh_token": false
        case "access_token": true
        default: throw failure("revoke_token", "expected refresh_token or access_token")
        }
    }

    /// `request_headers`: header name to value, sorted by name; names are HTTP tokens the broker does not write itself,
    /// values 1–256 bytes of visible ASCII and spaces.
    func requestHeaders() throws(ProviderConfigurationError) -> [(String, String)] {
        guard let raw = settings["request_headers"], !(raw is NSNull) else { return [] }
        guard let table = raw as? [String: Any] else {
            throw failure("request_headers", "must be an object of header name to string value")
        }
        var headers: [(String, String)] = []
        for name in table.keys.sorted() {
            let token =
                !name.isEmpty && name.utf8.count <= 64
                && name.utf8.allSatisfy { byte in
                    (byte >= 0x30 && byte <= 0x39) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A) || byte == UInt8(ascii: "-")
                }
            guard token else { throw failure("request_headers", "\"\(name)\" is not a header name of letters, digits and '-'") }
            guard !Self.reservedHeaders.contains(name.lowercased()) else {
                throw failure("request_headers", "may not set \"\(name)\"; the broker writes it")
            }
            guard let written = table[name] as? String else {
                throw failure("request_headers", "the value of \"\(name)\" must be a string")
            }
            let value = try resolve(written, key: "request_headers")
            guard (1...256).contains(value.utf8.count), value.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
                throw failure("request_headers", "the value of \"\(name)\" must be 1 to 256 bytes of visible ASCII and spaces")
            }
            headers.append((name, value))
        }
        return headers
    }
}

extension String {
    /// `a, b, c` as `a, b or c`.
    fileprivate func replacingLastComma(with word: String) -> String {
        guard let range = range(of: ", ", options: .backwards) else { return self }
        return replacingCharacters(in: range, with: word)
    }
}
