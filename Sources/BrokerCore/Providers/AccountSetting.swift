import Foundation

/// A value a provider's URLs need from each account rather than from the operator: a Shopify shop, a Zendesk or
/// Freshdesk subdomain, an Okta org, a region.
///
/// The provider's URLs hold `{name}`; ``ProviderConfiguration/applyingSettings(_:)`` checks the values an account
/// gives and fills them in. Every value is held to RFC 3986's unreserved characters (`A-Z a-z 0-9 - . _ ~`), so none
/// can add a path, query, fragment, user or port to a URL; one that lands in a host name must also be exactly one DNS
/// label (RFC 1123 §2.1: letters, digits and `-`, 1 to 63 of them, no `-` at either end), so none can move the host
/// to another domain; and it must match the setting's own `pattern` when it has one.
public struct AccountSetting: Sendable, Equatable {
    /// The name in the URLs and in requests: `subdomain`, `shop`.
    public var name: String
    /// A sentence for people and `/providers`: what to enter and where to find it.
    public var description: String
    /// A regular expression the whole value must match (anchored by the broker), or nil for the broker's rules only.
    public var pattern: String?

    /// Creates a setting.
    public init(name: String, description: String, pattern: String? = nil) {
        self.name = name
        self.description = description
        self.pattern = pattern
    }

    /// The most bytes of a value: more than any shop, subdomain or region, and a DNS label's 63 where it is a host.
    public static let maximumBytes = 100

    /// Why `value` cannot be this setting's value, as a phrase after the setting's name; nil when it can.
    /// `inHost` says whether `{name}` appears in a host name of the provider's URLs.
    public func problem(with value: String, inHost: Bool) -> String? {
        if value.isEmpty { return "is required: \(description)" }
        guard value.utf8.count <= Self.maximumBytes else { return "is longer than \(Self.maximumBytes) bytes" }
        // RFC 3986 §2.3 unreserved characters only: no '/', '@', '%', ':', '?', '#' or space can reach a URL.
        let unreserved = value.utf8.allSatisfy { byte in
            (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "~")
        }
        guard unreserved, value != ".", value != ".." else {
            return "may hold only letters, digits, '-', '.', '_' and '~' (and is not '.' or '..')"
        }
        if inHost, !Self.isDNSLabel(value) {
            return "lands in a host name, so it must be one DNS label: 1 to 63 letters, digits and '-', not starting or ending with '-'"
        }
        if let pattern, !CredentialScheme.matches(value, pattern: pattern) {
            return "does not have the form the provider expects (\(pattern))"
        }
        return nil
    }

    /// RFC 1123 §2.1 (LDH): 1–63 letters, digits and hyphens, neither first nor last a hyphen.
    public static func isDNSLabel(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        guard (1...63).contains(bytes.count), bytes.first != UInt8(ascii: "-"), bytes.last != UInt8(ascii: "-") else { return false }
        return bytes.allSatisfy { byte in
            (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == UInt8(ascii: "-")
        }
    }
}

extension ProviderConfiguration {
    /// The URLs per-account settings are filled into, by key path: sign-in, token, user, revocation, refresh, device,
    /// API base (the proxy's and verification's).
    /// (Computed: key paths are not `Sendable`, so a stored static list would be shared mutable state to Swift 6.)
    private static var settingURLs: [WritableKeyPath<ProviderConfiguration, String?>] {
        [
            \.authorizeURL, \.tokenURL, \.userURL, \.revokeURL, \.refreshURL, \.deviceAuthorizationURL, \.apiBaseURL,
            \.requestTokenURL, \.accessTokenURL, \.authenticateURL,
        ]
    }

    /// The names of the settings whose `{name}` appears in the host of one of the provider's URLs.
    public var settingsInHost: Set<String> {
        var names: Set<String> = []
        for path in Self.settingURLs {
            guard let url = self[keyPath: path], let scheme = url.range(of: "://") else { continue }
            let rest = url[scheme.upperBound...]
            let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            for setting in accountSettings where authority.contains("{" + setting.name + "}") { names.insert(setting.name) }
        }
        return names
    }

    /// This provider with `given` filled into its URLs, and the values kept (exactly the declared settings).
    ///
    /// Throws ``BrokerError/invalidSetting(name:reason:)`` naming the first setting that is unknown, missing or
    /// unfit (``AccountSetting/problem(with:inHost:)``) before anything is sent anywhere. A provider without settings
    /// takes an empty `given` and is returned unchanged.
    public func applyingSettings(_ given: [String: String]) throws(BrokerError) -> (ProviderConfiguration, [String: String]) {
        let declared = accountSettings.map(\.name)
        for name in given.keys.sorted() where !declared.contains(name) {
            let reason =
                declared.isEmpty
                ? "is not known: the provider \(self.name) takes no settings"
                : "is not known: the provider \(self.name) takes \(declared.joined(separator: ", "))"
            throw .invalidSetting(name: name, reason: reason)
        }
        guard !accountSettings.isEmpty else { return (self, [:]) }
        let inHost = settingsInHost
        var resolved = self
        for setting in accountSettings {
            let value = given[setting.name] ?? ""
            if let problem = setting.problem(with: value, inHost: inHost.contains(setting.name)) {
                throw .invalidSetting(name: setting.name, reason: problem)
            }
            let placeholder = "{" + setting.name + "}"
            for path in Self.settingURLs {
                if let url = resolved[keyPath: path], url.contains(placeholder) {
                    resolved[keyPath: path] = url.replacingOccurrences(of: placeholder, with: value)
                }
            }
            if let scheme = resolved.credentials { resolved.credentials = scheme.filling(placeholder, with: value) }
        }
        return (resolved, given)
    }
}

extension CredentialScheme {
    /// This scheme with `placeholder` (`{application_id}`) replaced by `value` in the verification path and in the
    /// formats that place the credential, so that ``render(_:_:)`` later fills only fields. A setting's value holds
    /// RFC 3986 unreserved characters only (``AccountSetting/problem(with:inHost:)``), never `{` or `}`, so it cannot
    /// be read as a further placeholder, and never a CR or LF, so it cannot split a header.
    func filling(_ placeholder: String, with value: String) -> CredentialScheme {
        var scheme = self
        if var verification = scheme.verification, verification.path.contains(placeholder) {
            verification.path = verification.path.replacingOccurrences(of: placeholder, with: value)
            scheme.verification = verification
        }
        switch scheme.placement {
        case .header(let name, let format):
            scheme.placement = .header(name: name, format: format.replacingOccurrences(of: placeholder, with: value))
        case .query(let name, let format):
            scheme.placement = .query(name: name, format: format.replacingOccurrences(of: placeholder, with: value))
        case .basic: break
        }
        scheme.additionalHeaders = scheme.additionalHeaders.map {
            HeaderField(name: $0.name, format: $0.format.replacingOccurrences(of: placeholder, with: value))
        }
        return scheme
    }

    /// The formats that place the credential: the placement's (none for Basic) and the further headers'.
    var placementFormats: [String] {
        switch placement {
        case .header(_, let format), .query(_, let format): [format] + additionalHeaders.map(\.format)
        case .basic: additionalHeaders.map(\.format)
        }
    }

    /// Whether `placeholder` appears in a format that places the credential (the placement or a further header).
    func places(_ placeholder: String) -> Bool {
        placementFormats.contains { $0.contains(placeholder) }
    }
}
