import BrokerCore
import BrokerCrypto
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Typed reads of environment variables, each failing with a `ConfigurationError` naming the variable.
struct EnvironmentReader {
    let env: [String: String]

    init(_ env: [String: String]) { self.env = env }

    /// The value, or nil when unset or empty.
    func raw(_ name: String) -> String? {
        guard let value = env[name], !value.isEmpty else { return nil }
        return value
    }

    func string(_ name: String, default fallback: String) throws(ConfigurationError) -> String {
        raw(name) ?? fallback
    }

    func integer(_ name: String, default fallback: Int, range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        guard let text = raw(name) else { return fallback }
        guard let value = Int(text), range.contains(value) else {
            throw ConfigurationError(
                variable: name, message: "must be a whole number from \(range.lowerBound) to \(range.upperBound), got \"\(text)\"")
        }
        return value
    }

    func seconds(_ name: String, default fallback: Double) throws(ConfigurationError) -> Double {
        guard let text = raw(name) else { return fallback }
        guard let value = Double(text), value.isFinite, value > 0, value <= 86_400 else {
            throw ConfigurationError(
                variable: name, message: "must be a number of seconds greater than 0 and at most 86400, got \"\(text)\"")
        }
        return value
    }

    /// Seconds from 0 to 86400, where 0 is allowed (to switch something off or to mean "at expiry").
    func secondsOrZero(_ name: String, default fallback: Double) throws(ConfigurationError) -> Double {
        guard let text = raw(name) else { return fallback }
        guard let value = Double(text), value.isFinite, value >= 0, value <= 86_400 else {
            throw ConfigurationError(variable: name, message: "must be a number of seconds from 0 to 86400, got \"\(text)\"")
        }
        return value
    }

    func boolean(_ name: String, default fallback: Bool) throws(ConfigurationError) -> Bool {
        guard let text = raw(name) else { return fallback }
        switch text.lowercased() {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off": return false
        default: throw ConfigurationError(variable: name, message: "must be on or off (true/false, 1/0), got \"\(text)\"")
        }
    }

    func choice<T: RawRepresentable & CaseIterable>(_ name: String, default fallback: T) throws(ConfigurationError) -> T
    where T.RawValue == String {
        guard let text = raw(name) else { return fallback }
        guard let value = T(rawValue: text.lowercased()) else {
            let allowed = T.allCases.map(\.rawValue).joined(separator: ", ")
            throw ConfigurationError(variable: name, message: "must be one of \(allowed), got \"\(text)\"")
        }
        return value
    }

    /// A numeric IPv4 or IPv6 address the server can bind.
    func host(_ name: String, default fallback: String) throws(ConfigurationError) -> String {
        let value = raw(name) ?? fallback
        var v4 = in_addr()
        var v6 = in6_addr()
        guard inet_pton(AF_INET, value, &v4) == 1 || inet_pton(AF_INET6, value, &v6) == 1 else {
            throw ConfigurationError(
                variable: name, message: "must be a numeric IPv4 or IPv6 address such as 127.0.0.1, 0.0.0.0 or ::, got \"\(value)\"")
        }
        return value
    }

    /// `host:port` with a numeric host (IPv6 in brackets) and a port from 0 to 65535; nil when unset.
    func address(_ name: String) throws(ConfigurationError) -> ListenAddress? {
        guard let text = raw(name) else { return nil }
        let problem = ConfigurationError(
            variable: name, message: "must be a numeric address and a port such as 127.0.0.1:9090 or [::1]:9090, got \"\(text)\"")
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            throw problem
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") {
            host = String(host.dropFirst().dropLast())
            guard host.contains(":") else { throw problem }
        } else if host.contains(":") {
            // An IPv6 address needs its brackets, or the port could not be told apart.
            throw problem
        }
        var v4 = in_addr()
        var v6 = in6_addr()
        guard inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1 else { throw problem }
        return ListenAddress(host: host, port: port)
    }

    /// Text shown to people: at most `maximumLength` characters, no control characters, not blank.
    func text(_ name: String, default fallback: String, maximumLength: Int) throws(ConfigurationError) -> String {
        guard let text = raw(name) else { return fallback }
        let controls = text.unicodeScalars.contains {
            $0.properties.generalCategory == .control || $0.properties.generalCategory == .format
        }
        guard !controls, text.count <= maximumLength, !text.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw ConfigurationError(
                variable: name, message: "must be 1 to \(maximumLength) characters of plain text without control characters")
        }
        return text
    }

    /// A colour written `#rrggbb` (hex digits), returned lowercase; nil when unset.
    func hexColour(_ name: String) throws(ConfigurationError) -> String? {
        guard let text = raw(name) else { return nil }
        guard text.utf8.count == 7, text.hasPrefix("#"), Hex.decode(String(text.dropFirst())) != nil else {
            throw ConfigurationError(variable: name, message: "must be a colour written #rrggbb, such as #0b57d0, got \"\(text)\"")
        }
        return text.lowercased()
    }

    /// A secret of at least `minimumLength` characters; the message never shows the value.
    func secret(_ name: String, minimumLength: Int) throws(ConfigurationError) -> Secret? {
        guard let text = raw(name) else { return nil }
        guard text.count >= minimumLength else {
            throw ConfigurationError(variable: name, message: "must be at least \(minimumLength) characters long (got \(text.count))")
        }
        return Secret(text)
    }

    /// An absolute http(s) URL without query or fragment; a trailing slash is dropped.
    func publicURL(_ name: String, default fallback: String) throws(ConfigurationError) -> String {
        var value = raw(name) ?? fallback
        while value.hasSuffix("/") { value.removeLast() }
        guard let url = URL(string: value), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            url.host != nil, url.query == nil, url.fragment == nil, url.user == nil
        else {
            throw ConfigurationError(
                variable: name, message: "must be an absolute http or https URL such as https://broker.example.com, got \"\(value)\"")
        }
        return value
    }

    /// Comma-separated origins exactly as browsers send them in `Origin` (see ``CORSPolicy/serialize(_:)``):
    /// `scheme://host[:port]` and nothing more, since a CORS origin matches byte for byte. Empty items are skipped.
    func exactOrigins(_ name: String) throws(ConfigurationError) -> [String] {
        guard let text = raw(name) else { return [] }
        var result: [String] = []
        for item in text.split(separator: ",") {
            let entry = item.trimmingCharacters(in: .whitespaces)
            guard !entry.isEmpty else { continue }
            guard entry != "*", entry.lowercased() != "null" else {
                throw ConfigurationError(variable: name, message: "lists origins one by one; \"\(entry)\" is not allowed with credentials")
            }
            guard let origin = CORSPolicy.serialize(entry) else {
                throw ConfigurationError(
                    variable: name,
                    message: "each entry must be an origin, scheme://host[:port] with no path "
                        + "(not even /), such as https://app.example.com; got \"\(entry)\"")
            }
            if !result.contains(origin) { result.append(origin) }
        }
        return result
    }

    /// Comma-separated origins (`scheme://host[:port]`), normalised to lowercase.
    func origins(_ name: String) throws(ConfigurationError) -> [String] {
        guard let text = raw(name) else { return [] }
        var result: [String] = []
        for item in text.split(separator: ",") {
            var origin = item.trimmingCharacters(in: .whitespaces).lowercased()
            while origin.hasSuffix("/") { origin.removeLast() }
            guard let url = URL(string: origin), let scheme = url.scheme, scheme == "http" || scheme == "https",
                url.host != nil, url.path.isEmpty, url.query == nil, url.user == nil
            else {
                throw ConfigurationError(
                    variable: name, message: "each entry must be an origin such as https://app.example.com, got \"\(item)\"")
            }
            result.append(origin)
        }
        return result
    }
}
