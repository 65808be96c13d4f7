import Foundation

extension ProvidersFileEntry {
    /// The providers-file keys of an `api_key`, `basic` or `bearer` provider (``CredentialScheme``).
    static let credentialKeys: Set<String> = [
        "auth", "fields", "credential_header", "credential_format", "credential_query_param", "credential_extra_headers", "verify",
    ]

    /// Reads `fields`, the placement (`credential_header` with `credential_format`, or `credential_query_param`) and
    /// `verify` over the kind's defaults; each is refused on a kind that signs in, since nothing would read it.
    func applyCredentials(to c: inout ProviderConfiguration) throws(ProviderConfigurationError) {
        let present = ["fields", "credential_header", "credential_format", "credential_query_param", "credential_extra_headers", "verify"]
            .filter {
                settings[$0] != nil
            }
        guard var scheme = c.credentials ?? CredentialScheme.defaults(for: c.kind) else {
            if let key = present.first {
                throw failure(key, "applies to api_key, basic and bearer providers only; this one is \(c.kind.rawValue)")
            }
            return
        }
        if settings["fields"] != nil { scheme.fields = try credentialFields(kind: c.kind) }
        // A placement may also carry per-account settings (Algolia's `X-Algolia-Application-Id: {application_id}`):
        // the file's own when it declares them, else the preset's.
        let settingNames = settings["settings"] != nil ? declaredSettingNames : c.accountSettings.map(\.name)
        scheme.placement = try placement(default: scheme.placement, fields: scheme.fields, settingNames: settingNames)
        if settings["credential_extra_headers"] != nil {
            scheme.additionalHeaders = try extraHeaders(fields: scheme.fields, settingNames: settingNames, placement: scheme.placement)
        }
        if settings["verify"] != nil {
            scheme.verification = try verification()
            guard c.apiBaseURL != nil else { throw failure("verify", "needs api_base_url, the base its path is joined to") }
        }
        c.credentials = scheme
    }

    /// `fields`: an array of `{"name", "description", "pattern"?, "max_length"?}`; names are unique snake_case words,
    /// and a `basic` provider's are `username` and `password`.
    private func credentialFields(kind: ProviderKind) throws(ProviderConfigurationError) -> [CredentialScheme.Field] {
        let shape = "must be an array of {\"name\", \"description\", \"pattern\", \"max_length\"} objects"
        guard let list = settings["fields"] as? [Any], !list.isEmpty, list.count <= 16 else {
            throw failure("fields", shape + ", 1 to 16 of them")
        }
        var fields: [CredentialScheme.Field] = []
        for item in list {
            guard let object = item as? [String: Any], let name = object["name"] as? String else { throw failure("fields", shape) }
            if let unknown = object.keys.sorted().first(where: { !["name", "description", "pattern", "max_length"].contains($0) }) {
                throw failure("fields", "unknown member \"\(unknown)\" in field \"\(name)\"")
            }
            let plain =
                (1...64).contains(name.utf8.count) && name.utf8.first.map({ (0x61...0x7A).contains($0) }) == true
                && name.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F }
            guard plain else { throw failure("fields", "a field name is 1 to 64 of a-z, 0-9 and '_', starting with a letter") }
            guard !fields.contains(where: { $0.name == name }) else { throw failure("fields", "the field \"\(name)\" is named twice") }
            var field = CredentialScheme.Field(name: name, description: object["description"] as? String ?? name)
            if let pattern = object["pattern"] {
                guard let text = pattern as? String, (try? NSRegularExpression(pattern: text)) != nil else {
                    throw failure("fields", "the pattern of \"\(name)\" is not a regular expression")
                }
                field.pattern = text
            }
            if let cap = object["max_length"] {
                guard let number = cap as? Int, JSONBoolean.value(cap) == nil, (1...CredentialScheme.maximumValueBytes).contains(number)
                else {
                    throw failure("fields", "the max_length of \"\(name)\" must be 1 to \(CredentialScheme.maximumValueBytes)")
                }
                field.maxLength = number
            }
            fields.append(field)
        }
        if kind == .basic, fields.map(\.name).sorted() != ["password", "username"] {
            throw failure("fields", "a basic provider's fields are \"username\" and \"password\"")
        }
        return fields
    }

    /// Where calls carry the credential: `credential_query_param` (a query parameter), or `credential_header` (default
    /// `Authorization`) with `credential_format` (default the kind's, `Bearer {api_key}`); a `basic` provider's is fixed.
    /// A format names at least one field, and may name settings as well.
    private func placement(default placement: CredentialScheme.Placement, fields: [CredentialScheme.Field], settingNames: [String])
        throws(ProviderConfigurationError)
        -> CredentialScheme.Placement
    {
        if case .basic = placement {
            if let key = ["credential_header", "credential_format", "credential_query_param"].first(where: { settings[$0] != nil }) {
                throw failure(key, "a basic provider sends Authorization: Basic (RFC 7617); it takes no other placement")
            }
            return .basic
        }
        let names = fields.map(\.name)
        let single = "{" + (names.first ?? "") + "}"
        let format = try string("credential_format")
        if let format {
            let used = CredentialScheme.placeholders(in: format)
            guard used.contains(where: names.contains), used.allSatisfy({ names.contains($0) || settingNames.contains($0) }) else {
                throw failure(
                    "credential_format",
                    "must name the fields it carries as {field}, among \(names.joined(separator: ", "))"
                        + (settingNames.isEmpty ? "" : ", and may name the settings \(settingNames.joined(separator: ", "))"))
            }
            guard !format.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }), format.utf8.count <= 256 else {
                throw failure("credential_format", "must be one line of at most 256 bytes")
            }
        }
        if settings["credential_query_param"] != nil {
            guard settings["credential_header"] == nil else {
                throw failure("credential_query_param", "give credential_query_param or credential_header, not both")
            }
            guard let name = try parameterName("credential_query_param") else { throw failure("credential_query_param", "must be a name") }
            return .query(name: name, format: format ?? single)
        }
        var header = "Authorization"
        if let name = try string("credential_header") {
            let lowered = name.lowercased()
            guard name.utf8.count <= 64, ProxyHeaders.isToken(name) else {
                throw failure("credential_header", "must be a header name (an HTTP token of at most 64 bytes)")
            }
            // Authorization is the credential's own field; the others are the transport's or the broker's.
            guard
                lowered == "authorization"
                    || (!ProxyOutbound.reservedNames.contains(lowered) && !Self.reservedHeaders.contains(lowered)
                        && !lowered.hasPrefix(ProxyHeaders.brokerPrefix))
            else { throw failure("credential_header", "may not set \"\(name)\"; the broker or the transport writes it") }
            header = name
        }
        if let format { return .header(name: header, format: format) }
        if case .header(_, let defaultFormat) = placement, settings["credential_header"] == nil {
            return .header(name: header, format: defaultFormat)
        }
        // A header other than Authorization carries the bare value (`X-Api-Key: {api_key}`) unless a format says more.
        return .header(name: header, format: header.lowercased() == "authorization" ? "Bearer " + single : single)
    }

    /// `credential_extra_headers`: `{"NAME": "FORMAT"}`, 1 to 4 further header fields each call carries beside the
    /// placement, for APIs that take two keys in two fields (Datadog's `DD-APPLICATION-KEY: {application_key}`).
    /// A value may carry settings instead of fields (`X-Algolia-Application-Id: {application_id}`).
    private func extraHeaders(fields: [CredentialScheme.Field], settingNames: [String], placement: CredentialScheme.Placement)
        throws(ProviderConfigurationError) -> [CredentialScheme.HeaderField]
    {
        let key = "credential_extra_headers"
        guard let object = settings[key] as? [String: Any], (1...4).contains(object.count) else {
            throw failure(key, "must be an object of 1 to 4 {\"Header-Name\": \"{field}\"} members")
        }
        let names = fields.map(\.name) + settingNames
        var taken: Set<String> = ["authorization"]
        if case .header(let primary, _) = placement { taken.insert(primary.lowercased()) }
        var headers: [CredentialScheme.HeaderField] = []
        for name in object.keys.sorted() {
            let lowered = name.lowercased()
            guard name.utf8.count <= 64, ProxyHeaders.isToken(name) else {
                throw failure(key, "a header name is an HTTP token of at most 64 bytes")
            }
            guard !taken.contains(lowered), !ProxyOutbound.reservedNames.contains(lowered), !Self.reservedHeaders.contains(lowered),
                !lowered.hasPrefix(ProxyHeaders.brokerPrefix)
            else { throw failure(key, "may not set \"\(name)\"; the placement, the broker or the transport writes it") }
            taken.insert(lowered)
            guard let format = object[name] as? String, format.utf8.count <= 256,
                !format.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
            else { throw failure(key, "the value of \"\(name)\" must be one line of at most 256 bytes") }
            let used = CredentialScheme.placeholders(in: format)
            guard !used.isEmpty, used.allSatisfy(names.contains) else {
                throw failure(
                    key,
                    "the value of \"\(name)\" must name the fields or settings it carries as {name}, among \(names.joined(separator: ", "))"
                )
            }
            headers.append(CredentialScheme.HeaderField(name: name, format: format))
        }
        return headers
    }

    /// `verify`: `{"method"?, "path", "valid_statuses"?, "user_id_field"?}`.
    private func verification() throws(ProviderConfigurationError) -> CredentialScheme.Verification {
        guard let object = settings["verify"] as? [String: Any] else {
            throw failure("verify", "must be an object {\"method\", \"path\", \"valid_statuses\", \"user_id_field\"}")
        }
        if let unknown = object.keys.sorted().first(where: { !["method", "path", "valid_statuses", "user_id_field"].contains($0) }) {
            throw failure("verify", "unknown member \"\(unknown)\"")
        }
        guard let path = object["path"] as? String, path.hasPrefix("/"), !path.hasPrefix("//"), path.utf8.count <= 1024,
            !path.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value >= 0x7F || $0 == "#" })
        else { throw failure("verify", "path must be a path under api_base_url, starting with one '/'") }
        var verification = CredentialScheme.Verification(path: path)
        if let method = object["method"] {
            guard let text = method as? String, ["GET", "POST", "HEAD"].contains(text) else {
                throw failure("verify", "method must be GET, POST or HEAD")
            }
            verification.method = text
        }
        if let statuses = object["valid_statuses"] {
            guard let list = statuses as? [Any], !list.isEmpty,
                list.allSatisfy({ ($0 as? Int).map { (200...399).contains($0) } == true && JSONBoolean.value($0) == nil })
            else { throw failure("verify", "valid_statuses must be a non-empty array of statuses from 200 to 399") }
            verification.validStatuses = list.compactMap { $0 as? Int }
        }
        if let field = object["user_id_field"] {
            guard let text = field as? String else { throw failure("verify", "user_id_field must be a string") }
            if let problem = ProviderJSONPath.problem(with: text) { throw failure("verify", "user_id_field " + problem) }
            verification.userIDField = ProviderJSONPath(text)
        }
        return verification
    }
}
