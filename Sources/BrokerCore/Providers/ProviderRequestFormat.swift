import Foundation

/// How a provider wants the body of its token and revocation requests: a form (RFC 6749 §4.1.3) or a JSON object.
///
/// The raw values are the providers-file spellings. Notion's and Atlassian's
/// token endpoints take `{"grant_type": …, "code": …}` as JSON; everyone else
/// takes the form RFC 6749 names.
public enum ProviderRequestFormat: String, Sendable, CaseIterable {
    /// `application/x-www-form-urlencoded`.
    case form
    /// `application/json`, one string member per parameter.
    case json

    /// The `Content-Type` of a body in this format.
    var contentType: String {
        switch self {
        case .form: "application/x-www-form-urlencoded"
        case .json: "application/json"
        }
    }

    /// The body carrying `pairs`: form-encoded in order, or a JSON object with sorted members (a later duplicate name wins).
    func body(_ pairs: [(String, String)]) -> [UInt8] {
        switch self {
        case .form:
            return FormEncoding.body(pairs)
        case .json:
            let object = Dictionary(pairs, uniquingKeysWith: { _, last in last })
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            // A dictionary of strings always encodes.
            return (try? Array(encoder.encode(object))) ?? Array("{}".utf8)
        }
    }
}
