import Foundation

/// Reads the providers file (`BROKER_PROVIDERS_FILE`): `{"providers": {"NAME": {...}}}`.
///
/// A name that matches a preset inherits it and each key given overrides it;
/// any other name is a custom provider and needs `kind` plus its endpoints.
/// A string value `${NAME}` is replaced by the environment variable `NAME`, so
/// the file itself need hold no secret.
enum ProvidersFile {
    /// Every key a provider entry may have.
    static let knownKeys: Set<String> = [
        "kind", "client_id", "client_secret", "authorize_url", "token_url", "user_url", "user_id_field",
        "user_token_param", "revoke_url", "revoke_token_param", "revoke_client_auth", "scopes", "scope_separator",
        "pkce", "authorize_params", "token_endpoint_auth_method",
        "request_token_url", "access_token_url", "api_key", "api_base_url", "authenticate_url", "api_allow_private",
        "api_token_param", "api_token_header", "api_token_format", "api_client_id_header", "allowed_scopes", "scope_upgrade",
    ]

    /// Authorize parameters the broker sets itself, which `authorize_params` may not override.
    static let reservedAuthorizeParameters: Set<String> = [
        "client_id", "redirect_uri", "response_type", "state", "scope", "code_challenge", "code_challenge_method",
    ]

    /// The providers the file defines, presets merged with their overrides, sorted by name.
    static func configurations(from bytes: [UInt8], environment: [String: String]) throws(ProviderConfigurationError)
        -> [ProviderConfiguration]
    {
        let providers = try providerTable(from: bytes)
        var result: [ProviderConfiguration] = []
        for name in providers.keys.sorted() {
            guard isValidName(name) else {
                throw ProviderConfigurationError(
                    provider: name, key: nil, message: "a provider name is 1 to 64 characters of a-z, 0-9, '-' and '_'")
            }
            guard let settings = providers[name] as? [String: Any] else {
                throw ProviderConfigurationError(provider: name, key: nil, message: "must be an object of settings")
            }
            let entry = ProvidersFileEntry(provider: name, settings: settings, environment: environment)
            result.append(try entry.configuration())
        }
        return result
    }

    /// Where in `bytes` the JSON parser stopped, as a 1-based line and column, when its error says
    /// ("… around character N."): the operator can go straight to the mistake.
    static func position(of error: any Error, in bytes: [UInt8]) -> (line: Int, column: Int)? {
        guard let text = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String,
            let range = text.range(of: "character ")
        else { return nil }
        let digits = text[range.upperBound...].prefix { $0.isASCII && $0.isNumber }
        guard let offset = Int(digits), offset >= 0, offset <= bytes.count else { return nil }
        let before = bytes[..<offset]
        let line = before.reduce(1) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
        let lineStart = before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
        return (line, offset - lineStart + 1)
    }

    /// The `providers` object of the file.
    private static func providerTable(from bytes: [UInt8]) throws(ProviderConfigurationError) -> [String: Any] {
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: Data(bytes), options: [])
        } catch {
            let place = Self.position(of: error, in: bytes).map { " (line \($0.line), column \($0.column))" } ?? ""
            throw ProviderConfigurationError(provider: nil, key: nil, message: "not valid JSON\(place)")
        }
        guard let root = parsed as? [String: Any] else {
            throw ProviderConfigurationError(
                provider: nil, key: nil, message: "the top level must be an object with a \"providers\" object")
        }
        if let unknown = root.keys.sorted().first(where: { $0 != "providers" }) {
            throw ProviderConfigurationError(provider: nil, key: unknown, message: "unknown key; the top level holds only \"providers\"")
        }
        guard let providers = root["providers"] as? [String: Any] else {
            throw ProviderConfigurationError(
                provider: nil, key: "providers", message: "missing or not an object of provider name to settings")
        }
        return providers
    }

    /// Provider names become URL parameters and the prefix of account ids (`name:uid`), so they stay plain.
    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64
            && name.utf8.allSatisfy { byte in
                (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
    }
}
