import Foundation

extension ProvidersFileEntry {
    /// The providers-file key of per-account settings (``AccountSetting``).
    static let settingKeys: Set<String> = ["settings"]

    /// The names `settings` declares, read without checking, so that URLs holding `{name}` can be checked first.
    var declaredSettingNames: [String] {
        (settings["settings"] as? [Any])?.compactMap { ($0 as? [String: Any])?["name"] as? String } ?? []
    }

    /// `text` with each declared `{name}` replaced by a plain label, for the URL checks: the URL must be sound
    /// whatever fit value an account gives.
    func withSampleSettings(_ text: String) -> String {
        declaredSettingNames.reduce(text) { $0.replacingOccurrences(of: "{" + $1 + "}", with: "setting") }
    }

    /// `settings`: an array of `{"name", "description", "pattern"?}`, names unique snake_case words, none a credential
    /// field's, each used as `{name}` in at least one of the provider's URLs, its verification path or its credential
    /// placement (`credential_format`, `credential_extra_headers`).
    func applySettings(to c: inout ProviderConfiguration) throws(ProviderConfigurationError) {
        guard let raw = settings["settings"] else { return }
        let shape = "must be an array of {\"name\", \"description\", \"pattern\"} objects"
        guard let list = raw as? [Any], list.count <= 8 else { throw failure("settings", shape + ", at most 8 of them") }
        var declared: [AccountSetting] = []
        for item in list {
            guard let object = item as? [String: Any], let name = object["name"] as? String else { throw failure("settings", shape) }
            if let unknown = object.keys.sorted().first(where: { !["name", "description", "pattern"].contains($0) }) {
                throw failure("settings", "unknown member \"\(unknown)\" in setting \"\(name)\"")
            }
            let plain =
                (1...64).contains(name.utf8.count) && name.utf8.first.map({ (0x61...0x7A).contains($0) }) == true
                && name.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F }
            guard plain else { throw failure("settings", "a setting name is 1 to 64 of a-z, 0-9 and '_', starting with a letter") }
            guard !declared.contains(where: { $0.name == name }) else {
                throw failure("settings", "the setting \"\(name)\" is named twice")
            }
            var setting = AccountSetting(name: name, description: object["description"] as? String ?? name)
            if let pattern = object["pattern"] {
                guard let text = pattern as? String, (try? NSRegularExpression(pattern: text)) != nil else {
                    throw failure("settings", "the pattern of \"\(name)\" is not a regular expression")
                }
                setting.pattern = text
            }
            // `{name}` in a placement would be read as a field too: one name, one meaning.
            guard c.credentials?.fields.contains(where: { $0.name == name }) != true else {
                throw failure("settings", "the setting \"\(name)\" has the name of a credential field")
            }
            let placeholder = "{" + name + "}"
            let used =
                [
                    c.authorizeURL, c.tokenURL, c.userURL, c.revokeURL, c.refreshURL, c.deviceAuthorizationURL, c.apiBaseURL,
                    c.credentials?.verification?.path,
                ]
                .contains { $0?.contains(placeholder) == true } || c.credentials?.places(placeholder) == true
            guard used else {
                throw failure("settings", "\"\(name)\" appears in none of the provider's URLs or credential placements as \(placeholder)")
            }
            declared.append(setting)
        }
        // A file that declares its own settings over a preset's must still declare each one the placement names
        // (the `algolia` preset's `{application_id}`), or calls would carry the placeholder itself.
        if let scheme = c.credentials {
            let known = Set(scheme.fields.map(\.name) + declared.map(\.name))
            if let stray = scheme.placementFormats.flatMap(CredentialScheme.placeholders(in:)).first(where: { !known.contains($0) }) {
                throw failure("settings", "the credential placement names {\(stray)}, which is neither a field nor a declared setting")
            }
        }
        c.accountSettings = declared
    }
}
