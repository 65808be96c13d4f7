import Foundation

/// A document fetched with a new account's access token right after it connects, kept with the account under `raw.<name>`.
///
/// Atlassian's 3LO tokens reach a site's API only through
/// `api.atlassian.com/ex/jira/{cloudId}/…`, and the cloud ids come from
/// `GET oauth/token/accessible-resources`, a JSON array of `{id, url, name,
/// scopes, avatarUrl}`. The providers file states the same with `resource_urls`.
///
/// The answer is hostile input like any other: it must be JSON (an object or an
/// array), no deeper than ``maximumDepth``; an array keeps its first
/// ``maximumEntries`` entries, fewer when the account's kept fields would pass
/// ``TokenExtras/maximumBytes``; of each object only ``fields`` are kept when set.
/// Lookups run at connect and reconnect only; a refresh keeps what they found
/// (sites added later appear when the user connects again).
public struct ResourceLookup: Sendable, Equatable {
    /// The member of `raw` the answer is kept under (`accessible_resources`).
    public var name: String
    /// The URL asked with `GET` and `Authorization: Bearer <access token>` (RFC 6750 §2.1).
    public var url: String
    /// The members kept of each object (the answer, or each entry of an array answer); nil keeps them all.
    public var fields: [String]?

    /// The most entries of an array answer kept.
    public static let maximumEntries = 20
    /// The deepest nesting of arrays and objects kept; a deeper answer is refused.
    public static let maximumDepth = 6
    /// The most lookups one provider may have.
    public static let maximumLookups = 4

    /// Creates a lookup kept under `name`.
    public init(name: String, url: String, fields: [String]? = nil) {
        self.name = name
        self.url = url
        self.fields = fields
    }

    /// Why `name` cannot name a kept lookup, or nil: a plain name of 1–64 letters, digits and `_`, not one the token answer's own fields use.
    static func problem(withName name: String) -> String? {
        let plain =
            (1...64).contains(name.utf8.count)
            && name.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A) || byte == UInt8(ascii: "_")
            }
        guard plain else { return "\"\(name)\" is not a plain name of 1 to 64 letters, digits and '_'" }
        if TokenExtras.interpreted.contains(name) || name == "id_token" {
            return "\"\(name)\" is a token answer field; choose another name"
        }
        return nil
    }

    /// The part of `answer` kept, or why none is: the entry cap and ``fields`` applied, the depth checked.
    func kept(from answer: Any) -> Result<Any, LookupProblem> {
        let value: Any
        if let list = answer as? [Any] {
            value = list.prefix(Self.maximumEntries).map(select)
        } else if answer is [String: Any] {
            value = select(answer)
        } else {
            return .failure(.notJSONDocument)
        }
        guard Self.depth(of: value) <= Self.maximumDepth else { return .failure(.tooDeep) }
        return .success(value)
    }

    /// `value` with only ``fields`` when it is an object and they are set.
    private func select(_ value: Any) -> Any {
        guard let fields, let object = value as? [String: Any] else { return value }
        return object.filter { fields.contains($0.key) }
    }

    /// How deeply arrays and objects nest in `value`: 0 for a scalar; stops counting past ``maximumDepth``.
    static func depth(of value: Any, from level: Int = 0) -> Int {
        guard level <= maximumDepth else { return level }
        if let list = value as? [Any] { return list.map { depth(of: $0, from: level + 1) }.max() ?? level + 1 }
        if let object = value as? [String: Any] { return object.values.map { depth(of: $0, from: level + 1) }.max() ?? level + 1 }
        return level
    }

    /// Why an answer was not kept.
    enum LookupProblem: Error, CustomStringConvertible {
        /// Valid JSON that is neither an object nor an array.
        case notJSONDocument
        /// Nested deeper than ``ResourceLookup/maximumDepth``.
        case tooDeep

        var description: String {
            switch self {
            case .notJSONDocument: "the answer is not a JSON object or array"
            case .tooDeep: "the answer nests deeper than \(ResourceLookup.maximumDepth) levels"
            }
        }
    }
}
