import Foundation

/// A value a preset's endpoints depend on, read from an environment variable with a default.
///
/// Microsoft Entra ID's tenant (`common`, `organizations`, `consumers`, a
/// tenant id or a verified domain), GitLab's base URL for a self-hosted
/// instance, Salesforce's login host for a sandbox or My Domain. The preset's
/// URLs hold `{name}`; the value replaces it when the preset is read, after
/// ``problem(with:)`` found it fit, so no value can add a path, query or
/// fragment to an endpoint.
struct PresetVariable: Sendable {
    /// What a value may look like.
    enum Shape: Sendable {
        /// One path segment or host label run: letters, digits, `.`, `-` and `_` (a tenant id or domain).
        case pathSegment
        /// A DNS host name: labels of letters, digits and `-`, joined with `.`.
        case host
        /// An absolute `https` (or `http`) URL with no query or fragment; a trailing `/` is dropped.
        case baseURL
    }

    /// The name in the preset's URLs, without braces: `tenant`.
    let name: String
    /// The environment variable that sets it: `MICROSOFT_TENANT`.
    let variable: String
    /// The value when the variable is unset or empty.
    let defaultValue: String
    /// What a value may look like.
    let shape: Shape

    /// The value `environment` gives, or the default; nil when the given value is unfit (``problem(with:)`` says why).
    func value(in environment: [String: String]) -> String? {
        guard let given = environment[variable], !given.isEmpty else { return defaultValue }
        guard problem(with: given) == nil else { return nil }
        return shape == .baseURL ? String(given.reversed().drop(while: { $0 == "/" }).reversed()) : given
    }

    /// Why `value` cannot stand in the preset's URLs, or nil when it can.
    func problem(with value: String) -> String? {
        switch shape {
        case .pathSegment:
            let fits =
                value.utf8.count <= 253
                && value.unicodeScalars.allSatisfy {
                    $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0))
                } && value != "." && value != ".."
            return fits ? nil : "must be a tenant name, id or domain: letters, digits, '.', '-' and '_'"
        case .host:
            let labels = value.split(separator: ".", omittingEmptySubsequences: false)
            let fits =
                value.utf8.count <= 253
                && labels.allSatisfy { label in
                    (1...63).contains(label.utf8.count)
                        && label.unicodeScalars.allSatisfy {
                            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-")
                        }
                }
            return fits ? nil : "must be a host name such as login.salesforce.com or test.salesforce.com"
        case .baseURL:
            let parts = URLComponents(string: value)
            let scheme = parts?.scheme?.lowercased()
            let fits =
                (scheme == "https" || scheme == "http") && !(parts?.host ?? "").isEmpty && parts?.query == nil
                && parts?.fragment == nil && parts?.user == nil && !value.contains("{")
            return fits ? nil : "must be an absolute http or https URL without a query or fragment, such as https://gitlab.example.com"
        }
    }
}
