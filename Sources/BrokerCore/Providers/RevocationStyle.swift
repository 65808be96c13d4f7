/// How an OAuth 2.0 revocation request carries the token; the raw values are the providers-file spellings of `revoke_request_format`.
public enum RevocationStyle: String, Sendable, CaseIterable {
    /// RFC 7009 §2.1: a form POST of `token` (or the configured parameter) and `token_type_hint`.
    case form
    /// A JSON POST of `{"token": …}` (Notion's `oauth/revoke`).
    case json
    /// A POST with the access token as `Authorization: Bearer` and no body (Dropbox's `auth/token/revoke`).
    case bearer
}
