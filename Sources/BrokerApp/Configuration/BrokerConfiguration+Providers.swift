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
        // A `${NAME}` the file references may be given as `NAME_FILE` like the broker's own secrets; the broker's own
        // `BROKER_…_FILE` variables name files of other kinds (the providers file itself, CA certificates), so not those.
        var environment = environment
        if let file, let text = String(validating: file, as: UTF8.self) {
            let references = Self.environmentReferences(in: text).filter { !$0.hasPrefix("BROKER_") }
            environment = try EnvironmentReader.readingSecretFiles(environment, extraVariables: references)
        }
        do {
            return try ProviderRegistry.load(environment: environment, providersFile: file).all
        } catch {
            throw ConfigurationError(variable: error.variable ?? "BROKER_PROVIDERS_FILE", message: "\(error)")
        }
    }

    /// The names of the whole-value `${NAME}` references in a providers file's text, sorted.
    static func environmentReferences(in text: String) -> [String] {
        var names: Set<String> = []
        var rest = Substring(text)
        while let start = rest.range(of: "\"${") {
            rest = rest[start.upperBound...]
            let name = rest.prefix { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
            if !name.isEmpty, !(name.first?.isNumber ?? true), rest.dropFirst(name.count).hasPrefix("}\"") { names.insert(String(name)) }
        }
        return names.sorted()
    }
}
