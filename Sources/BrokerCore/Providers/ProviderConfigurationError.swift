/// Why the provider configuration cannot be used; start-up stops (exit 2) with ``description``.
///
/// The message names the provider, the key and any environment variable involved, never a value.
public struct ProviderConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The provider at fault, or nil for a fault of the whole file.
    public let provider: String?
    /// The key at fault, or nil.
    public let key: String?
    /// What is wrong, as a sentence fragment.
    public let message: String
    /// The environment variable at fault, when the fault is one a preset reads (`MICROSOFT_TENANT`) rather than the file.
    public let variable: String?

    /// Creates an error about `provider` and `key`, or about the preset variable `variable`.
    public init(provider: String?, key: String?, message: String, variable: String? = nil) {
        self.provider = provider
        self.key = key
        self.message = message
        self.variable = variable
    }

    /// For example `providers file: provider "acme", key "token_url": missing (a custom provider needs it)`,
    /// or `preset "gitlab": must be an absolute http or https URL …` for a preset variable.
    public var description: String {
        if variable != nil { return "preset \"\(provider ?? "")\": " + message }
        var place = "providers file"
        if let provider { place += ": provider \"\(provider)\"" }
        if let key { place += (provider == nil ? ": " : ", ") + "key \"\(key)\"" }
        return place + ": " + message
    }
}
