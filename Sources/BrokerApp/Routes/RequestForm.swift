import BrokerCore
import BrokerHTTP
import Foundation

/// The fields of a request given as query, `application/x-www-form-urlencoded` body or a
/// flat JSON object body; body fields win over query ones.
///
/// Tags come as a JSON object of strings (`"tags": {"plan": "pro"}`) or as
/// repeated `tag=key:value` fields of the query or a form body.
struct RequestForm {
    private var fields: [String: String] = [:]
    /// Members of a JSON body whose value is not a string (a number, an object, …), which the flat fields leave out.
    private(set) var nonStringFields: Set<String> = []
    /// The tags given, in order, as `key:value` pairs split at the first colon; `(text, nil)` for a pair without a colon.
    private(set) var tagPairs: [(key: String, value: String?)] = []
    /// Whether a JSON body's `tags` was something other than an object of strings.
    private(set) var tagsMalformed = false

    /// Every field name given, in the query and the body.
    var names: [String] { Array(fields.keys) + nonStringFields.filter { fields[$0] == nil } }
    /// A JSON body's `scopes` given as an array (`["read","write"]`); nil otherwise (a string stays a field).
    private(set) var scopeArray: [String]?
    /// A JSON body's `settings` member as it came (an object of strings when well-formed); nil when absent.
    private(set) var settingsMember: Any?
    /// Whether the body claimed to be JSON and was not a JSON object.
    private(set) var bodyIsNotJSON = false

    init(_ request: Request) {
        for item in request.queryItems where fields[item.name] == nil { fields[item.name] = item.value }
        for item in request.queryItems where item.name == "tag" { tagPairs.append(Self.split(item.value)) }
        let type = (request.headers["Content-Type"] ?? "").lowercased()
        if type.hasPrefix("application/json") {
            let parsed = request.body.isEmpty ? [:] : (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any]
            bodyIsNotJSON = parsed == nil
            if let object = parsed {
                // A member that is null is as good as absent.
                for (key, value) in object where !(value is NSNull) {
                    if let text = value as? String { fields[key] = text } else { nonStringFields.insert(key) }
                }
                if let list = object["scopes"] as? [Any] {
                    // A non-string item becomes "" and fails the scope check, naming the field.
                    scopeArray = list.map { $0 as? String ?? "" }
                }
                if let settings = object["settings"], !(settings is NSNull) { settingsMember = settings }
                if let tags = object["tags"], !(tags is NSNull) {
                    if let pairs = tags as? [String: Any], pairs.values.allSatisfy({ $0 is String }) {
                        // Sorted, so that an error names the same key every time.
                        tagPairs = pairs.keys.sorted().map { ($0, pairs[$0] as? String) }
                    } else {
                        tagsMalformed = true
                    }
                }
            }
        } else if type.hasPrefix("application/x-www-form-urlencoded") {
            var bodyTags: [(key: String, value: String?)] = []
            for item in URLEncodedForm.parse(String(decoding: request.body, as: UTF8.self)) {
                fields[item.name] = item.value
                if item.name == "tag" { bodyTags.append(Self.split(item.value)) }
            }
            if !bodyTags.isEmpty { tagPairs = bodyTags }
        }
    }

    subscript(name: String) -> String? { fields[name] }

    /// The flow's `scopes` (a JSON array, or one string separated by commas or spaces), checked on entry
    /// (``Scopes/validated(_:field:)``); nil when absent.
    func scopes() throws(BrokerError) -> [String]? {
        if let scopeArray { return try Scopes.validated(scopeArray) }
        if let text = fields["scopes"] { return try Scopes.validated(text: text) }
        if nonStringFields.contains("scopes") { throw .badRequest("scopes must be an array of strings or one string") }
        return nil
    }

    /// Every field name given except `settings.NAME` ones, for ``StrictInput/fields(_:allowed:)``.
    var namesBesideSettings: [String] { names.filter { !SettingsParameters.isSetting($0) } }

    /// The provider's per-account settings: a JSON body's `settings` object, or `settings.NAME` fields of the query or
    /// a form body (not both); empty when none. Names and values are checked against the provider later.
    func settings() throws(BrokerError) -> [String: String] {
        let items = fields.filter { SettingsParameters.isSetting($0.key) }.map { (name: $0.key, value: $0.value) }
        guard let settingsMember else { return try SettingsParameters.from(items) }
        guard items.isEmpty else { throw .badRequest("Give settings as a JSON settings object or as settings.NAME fields, not both") }
        return try CredentialHandlers.settings(settingsMember)
    }

    /// `key:value` split at the first colon; no colon gives the whole text as key and no value.
    private static func split(_ pair: String) -> (key: String, value: String?) {
        guard let colon = pair.firstIndex(of: ":") else { return (pair, nil) }
        return (String(pair[..<colon]), String(pair[pair.index(after: colon)...]))
    }
}
