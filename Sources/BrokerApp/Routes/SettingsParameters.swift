import BrokerCore
import BrokerHTTP

/// A provider's per-account settings (``AccountSetting``) as a request gives them: `settings.NAME=value` in a query
/// or form body (`GET /authorize?provider=zendesk&settings.subdomain=acme`), or a JSON body's `settings` object.
///
/// Only the shape is read here; ``ProviderConfiguration/applyingSettings(_:)`` checks names and values against the
/// provider before anything is sent anywhere.
enum SettingsParameters {
    /// The prefix of a setting's parameter name.
    static let prefix = "settings."

    /// Whether `name` is a `settings.NAME` parameter.
    static func isSetting(_ name: String) -> Bool {
        name.hasPrefix(prefix)
    }

    /// The `settings.NAME` items of `items` by name; `400 invalid_setting` naming one that is given twice, so that two
    /// values never race for one URL.
    static func from(_ items: [(name: String, value: String)]) throws(BrokerError) -> [String: String] {
        var settings: [String: String] = [:]
        for item in items where isSetting(item.name) {
            let name = String(item.name.dropFirst(prefix.count))
            guard settings[name] == nil else { throw .invalidSetting(name: name, reason: "is given more than once") }
            settings[name] = item.value
        }
        return settings
    }
}
