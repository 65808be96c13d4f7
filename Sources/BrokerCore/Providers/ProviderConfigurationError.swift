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

    /// Creates an error about `provider` and `key`.
    public init(provider: String?, key: String?, message: String) {
        self.provider = provider
        self.key = key
        self.message = message
    }

    /// For example `providers file: provider "acme", key "token_url": missing (a custom provider needs it)`.
    public var description: String {
        var place = "providers file"
        if let provider { place += ": provider \"\(provider)\"" }
        if let key { place += (provider == nil ? ": " : ", ") + "key \"\(key)\"" }
        return place + ": " + message
    }
}
