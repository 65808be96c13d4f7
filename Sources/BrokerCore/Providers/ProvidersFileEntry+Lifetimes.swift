import Foundation

extension ProvidersFileEntry {
    /// The providers-file keys about token lifetimes, for every kind that refreshes or expires.
    static let lifetimeKeys: Set<String> = ["refresh_margin", "default_expires_in"]

    /// The longest `refresh_margin` and `default_expires_in` accepted: one year in seconds.
    static let maximumLifetimeSetting = 31_536_000

    /// Reads `refresh_margin` (seconds before expiry to refresh) and `default_expires_in` (the lifetime of a token
    /// whose answer has no `expires_in`); each a whole number of seconds, 0…one year (`default_expires_in` from 1).
    func applyLifetimes(to c: inout ProviderConfiguration) throws(ProviderConfigurationError) {
        if let margin = try seconds("refresh_margin", minimum: 0) { c.refreshMargin = TimeInterval(margin) }
        if let lifetime = try seconds("default_expires_in", minimum: 1) { c.defaultExpiresIn = lifetime }
    }

    /// The whole number of seconds at `key`, minimum…``maximumLifetimeSetting``; nil when absent or JSON null.
    private func seconds(_ key: String, minimum: Int) throws(ProviderConfigurationError) -> Int? {
        guard let raw = settings[key], !(raw is NSNull) else { return nil }
        let range = "a whole number of seconds from \(minimum) to \(Self.maximumLifetimeSetting)"
        // Booleans, fractions and strings are refused.
        guard let number = JSONBoolean.number(raw),
            let value = Int(exactly: number.doubleValue), (minimum...Self.maximumLifetimeSetting).contains(value)
        else {
            throw failure(key, "must be \(range)")
        }
        return value
    }
}
