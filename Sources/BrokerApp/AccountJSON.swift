import BrokerCore
import BrokerHTTP
import Foundation

/// JSON renderings of an account: the full one with its token for `/account`, and a
/// summary without secrets for lists and callback pages.
///
/// `status` is what ``AccountService/reportedStatus(of:)`` says: `active`,
/// `expired` or `reauthorization_required`.
enum AccountJSON {
    /// `{"id","provider","uid","access_token",…}`; never the refresh token.
    static func full(_ account: Account, status: String) -> String {
        var fields = common(account, status: status)
        fields.insert(("access_token", JSONString.quote(account.accessToken.value)), at: 3)
        if let secret = account.tokenSecret { fields.insert(("token_secret", JSONString.quote(secret.value)), at: 4) }
        return object(fields)
    }

    /// The same without any secret.
    static func summary(_ account: Account, status: String) -> String {
        object(common(account, status: status))
    }

    private static func common(_ a: Account, status: String) -> [(String, String)] {
        var fields: [(String, String)] = [
            ("id", JSONString.quote(a.id)), ("provider", JSONString.quote(a.provider)), ("uid", JSONString.quote(a.uid)),
            ("token_type", optional(a.tokenType)), ("scope", optional(a.scope)),
            ("expires_at", date(a.expiresAt)), ("created_at", date(a.createdAt)), ("updated_at", date(a.updatedAt)),
            ("refreshed_at", date(a.refreshedAt)), ("status", JSONString.quote(status)),
        ]
        if let name = a.screenName { fields.append(("screen_name", JSONString.quote(name))) }
        return fields
    }

    static func object(_ fields: [(String, String)]) -> String {
        "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    static func optional(_ s: String?) -> String { s.map(JSONString.quote) ?? "null" }

    static func date(_ d: Date?) -> String {
        guard let d else { return "null" }
        return JSONString.quote(RFC3339Date.format(d))
    }
}
