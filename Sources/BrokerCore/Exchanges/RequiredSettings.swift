/// Reads the settings a provider kind cannot work without, noting each absent or empty one, so a kind's settings initializer states its rule once.
///
/// A kind's settings type reads every value through here in its fixed order;
/// ``check()`` then refuses with ``BrokerError/providerNotConfigured(_:missing:)``
/// naming the missing settings as the operator sets them (`WEIBO_CLIENT_ID`, `token_url`).
package struct RequiredSettings {
    /// The provider being read.
    let provider: ProviderConfiguration
    /// The providers-file keys of the settings found missing so far, in reading order.
    private(set) var missingKeys: [String] = []

    /// Starts reading `provider`.
    init(_ provider: ProviderConfiguration) {
        self.provider = provider
    }

    /// `value` when present and not empty; otherwise notes `key` as missing and gives an empty string, never used since ``check()`` fails.
    mutating func text(_ key: String, _ value: String?) -> String {
        guard let value, !value.isEmpty else {
            missingKeys.append(key)
            return ""
        }
        return value
    }

    /// `value` when present and not empty; otherwise notes `key` as missing, like ``text(_:_:)``.
    mutating func secret(_ key: String, _ value: Secret?) -> Secret {
        Secret(text(key, value?.value))
    }

    /// The missing settings as the operator names them: the provider's setting name for a key, else the key.
    var missingNames: [String] {
        missingKeys.map { provider.settingNames[$0] ?? $0 }
    }

    /// Refuses, naming every missing setting, when any was missing.
    func check() throws(BrokerError) {
        guard missingKeys.isEmpty else { throw .providerNotConfigured(provider.name, missing: missingNames) }
    }
}

/// A provider kind's settings type: it reads a ``ProviderConfiguration`` once, through
/// ``RequiredSettings``, and building the settings and listing what is missing both come from
/// that one reader.
package protocol ProviderKindSettings {
    /// Reads `provider` through `required`, the one statement of what the kind requires.
    init(_ provider: ProviderConfiguration, reading required: inout RequiredSettings)
}

extension ProviderKindSettings {
    /// The settings of `provider`; throws ``BrokerError/providerNotConfigured(_:missing:)`` naming every missing required setting.
    package init(_ provider: ProviderConfiguration) throws(BrokerError) {
        var required = RequiredSettings(provider)
        self.init(provider, reading: &required)
        try required.check()
    }

    /// The providers-file keys of the settings `provider` lacks, in the kind's fixed order.
    static func missingKeys(in provider: ProviderConfiguration) -> [String] {
        var required = RequiredSettings(provider)
        _ = Self(provider, reading: &required)
        return required.missingKeys
    }
}
