import Foundation

/// An API base each account's token answer names, for a provider whose API lives at a host of the account's own that
/// the sign-in only learns: Salesforce's `instance_url` (`https://acme.my.salesforce.com`).
///
/// The value comes from the provider, so it is held to the provider's own domains before the proxy sends anything
/// there: `https`, no user, port, query or fragment, and a host that is one of `hostSuffixes` or ends in `.` plus one.
public struct TokenAnswerAPIBase: Sendable, Equatable {
    /// The top-level field of the token answer (kept under the account's `raw`) that holds the base.
    public var field: String
    /// The domains the host must be under (`salesforce.com`, `force.com`).
    public var hostSuffixes: [String]
    /// A path added after the named URL; empty for none.
    public var path: String

    /// Creates the rule.
    public init(field: String, hostSuffixes: [String], path: String = "") {
        self.field = field
        self.hostSuffixes = hostSuffixes
        self.path = path
    }

    /// The base `extras` (the account's `raw` JSON object) names, or nil when it names none that passes the checks.
    public func base(in extras: String?) -> String? {
        guard let extras, let object = (try? JSONSerialization.jsonObject(with: Data(extras.utf8))) as? [String: Any],
            let text = object[field] as? String, text.utf8.count <= 2048
        else { return nil }
        return Self.checked(text, under: hostSuffixes).map { $0 + path }
    }

    /// `text` without a trailing `/` when it is an `https` URL with a plain host under one of `suffixes` and nothing
    /// but a path; nil otherwise.
    static func checked(_ text: String, under suffixes: [String]) -> String? {
        guard let url = URLComponents(string: text), url.scheme?.lowercased() == "https", let host = url.host?.lowercased(),
            !host.isEmpty, url.user == nil, url.password == nil, url.port == nil, url.query == nil, url.fragment == nil,
            host.split(separator: ".", omittingEmptySubsequences: false).allSatisfy({ AccountSetting.isDNSLabel(String($0)) }),
            suffixes.contains(where: { host == $0 || host.hasSuffix("." + $0) })
        else { return nil }
        var base = text
        while base.hasSuffix("/") { base.removeLast() }
        return base
    }
}
