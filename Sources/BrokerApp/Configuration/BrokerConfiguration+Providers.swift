import BrokerCore
import Foundation

extension BrokerConfiguration {
    /// The presets configured through `environment`, and the entries of the providers file at `path`.
    ///
    /// A preset's endpoint variable (`MICROSOFT_TENANT`) that cannot stand in a URL is
    /// named itself; any other problem is the providers file's.
    static func loadProviders(environment: [String: String], providersFile path: String?) throws(ConfigurationError)
        -> [ProviderConfiguration]
    {
        var file: [UInt8]?
        if let path {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ConfigurationError(variable: "BROKER_PROVIDERS_FILE", message: "cannot read \(path)")
            }
            file = Array(data)
        }
        do {
            return try ProviderRegistry.load(environment: environment, providersFile: file).all
        } catch {
            throw ConfigurationError(variable: error.variable ?? "BROKER_PROVIDERS_FILE", message: "\(error)")
        }
    }
}
