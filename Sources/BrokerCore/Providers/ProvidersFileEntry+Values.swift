import Foundation

extension ProvidersFileEntry {
    /// The string at `key` with a `${NAME}` reference resolved; nil when absent or JSON null.
    func string(_ key: String) throws(ProviderConfigurationError) -> String? {
        guard let raw = settings[key], !(raw is NSNull) else { return nil }
        guard let text = raw as? String else { throw failure(key, "must be a string") }
        return try resolve(text, key: key)
    }

    /// The absolute http(s) URL at `key`; nil when absent or JSON null.
    func url(_ key: String) throws(ProviderConfigurationError) -> String? {
        guard let text = try string(key) else { return nil }
        return try checkedURL(text, key: key)
    }

    /// `text` when it is an absolute http(s) URL without a fragment; else an error naming `key`.
    func checkedURL(_ text: String, key: String) throws(ProviderConfigurationError) -> String {
        // A declared per-account setting's `{name}` stands for a checked label (``AccountSetting``).
        guard let parsed = URLComponents(string: withSampleSettings(text)), let scheme = parsed.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = parsed.host, !host.isEmpty, parsed.fragment == nil
        else {
            throw failure(key, "must be an absolute http or https URL without a fragment")
        }
        return text
    }

    /// A field or parameter name at `key`: letters, digits, `_`, `-` and `.`.
    func parameterName(_ key: String) throws(ProviderConfigurationError) -> String? {
        guard let text = try string(key) else { return nil }
        let plain =
            !text.isEmpty && text.utf8.count <= 64
            && text.unicodeScalars.allSatisfy {
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "_" || $0 == "-" || $0 == ".")
            }
        guard plain else { throw failure(key, "must be a plain name of letters, digits, '_', '-' or '.'") }
        return text
    }

    /// The boolean at `key`; nil when absent.
    func bool(_ key: String) throws(ProviderConfigurationError) -> Bool? {
        guard let raw = settings[key] else { return nil }
        // A plain 0 or 1 is not a boolean.
        guard let flag = JSONBoolean.value(raw) else { throw failure(key, "must be true or false") }
        return flag
    }

    /// The `scopes` array of strings, each resolved.
    func scopes(key: String = "scopes") throws(ProviderConfigurationError) -> [String] {
        guard let list = settings[key] as? [Any] else { throw failure(key, "must be an array of strings") }
        var scopes: [String] = []
        for item in list {
            guard let text = item as? String, !text.isEmpty else { throw failure(key, "must be an array of non-empty strings") }
            scopes.append(try resolve(text, key: key))
        }
        return scopes
    }

    /// `scope_upgrade`: `{"mode": "reconsent"|"additive"|"incremental", "params": {NAME: VALUE}}`, how the provider
    /// adds scopes to a grant (``ScopeUpgrade``); `params` may not set what the broker sets.
    func scopeUpgrade() throws(ProviderConfigurationError) -> ScopeUpgrade {
        let key = "scope_upgrade"
        guard let table = settings[key] as? [String: Any], Set(table.keys).isSubset(of: ["mode", "params"]) else {
            throw failure(key, "must be an object with \"mode\" and optional \"params\"")
        }
        guard let text = table["mode"] as? String, let mode = ScopeUpgrade.Mode(rawValue: text) else {
            throw failure(key, "mode must be reconsent, additive or incremental")
        }
        var pairs: [(String, String)] = []
        if let params = table["params"] {
            guard let object = params as? [String: Any] else { throw failure(key, "params must be an object of strings") }
            for name in object.keys.sorted() {
                guard !ProvidersFile.reservedAuthorizeParameters.contains(name) else {
                    throw failure(key, "params may not set \"\(name)\"; the broker sets it")
                }
                guard let value = object[name] as? String else { throw failure(key, "the value of \"\(name)\" must be a string") }
                pairs.append((name, try resolve(value, key: key)))
            }
        }
        return ScopeUpgrade(mode: mode, parameters: pairs)
    }

    /// The `authorize_params` object as ordered pairs (sorted by name, since JSON objects have no order).
    func authorizeParameters() throws(ProviderConfigurationError) -> [(String, String)] {
        guard let table = settings["authorize_params"] as? [String: Any] else {
            throw failure("authorize_params", "must be an object of parameter name to string value")
        }
        var pairs: [(String, String)] = []
        for name in table.keys.sorted() {
            guard !ProvidersFile.reservedAuthorizeParameters.contains(name) else {
                throw failure("authorize_params", "may not set \"\(name)\"; the broker sets it")
            }
            guard let value = table[name] as? String else { throw failure("authorize_params", "the value of \"\(name)\" must be a string") }
            pairs.append((name, try resolve(value, key: "authorize_params")))
        }
        return pairs
    }

    /// Replaces a whole-value `${NAME}` with `environment[NAME]`; other strings are returned as they are.
    ///
    /// The error names the variable, never a value.
    func resolve(_ text: String, key: String) throws(ProviderConfigurationError) -> String {
        guard text.hasPrefix("${") else { return text }
        guard text.hasSuffix("}"), text.count > 3 else { throw failure(key, "malformed environment reference; write ${NAME}") }
        let variable = String(text.dropFirst(2).dropLast())
        let validName =
            variable.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "_") }
            && !(variable.first?.isNumber ?? true)
        guard validName else { throw failure(key, "malformed environment reference; write ${NAME}") }
        guard let value = environment[variable], !value.isEmpty else {
            throw failure(key, "environment variable \(variable) is not set")
        }
        return value
    }
}
