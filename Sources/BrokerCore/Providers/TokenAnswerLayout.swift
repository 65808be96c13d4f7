/// Where an OAuth 2.0 token answer keeps the tokens and names the user; every field defaults to the RFC 6749 §5.1 layout.
///
/// Slack's `oauth.v2.access` puts the user token under `authed_user` and the
/// user's id at `authed_user.id`; Strava names the athlete in `athlete`;
/// Notion the owner in `owner.user`. A preset states its provider's layout
/// here and the providers file sets the same keys (`token_path`,
/// `token_user_id_field`, `token_user_name_field`).
public struct TokenAnswerLayout: Sendable, Equatable {
    /// The JSON path of the object holding `access_token`, `refresh_token`, `expires_in`, `scope` and `token_type`
    /// (Slack: `authed_user`); the top level when nil, and when that object holds no `access_token`.
    public var tokensAt: String?
    /// The JSON paths naming the user, their values joined with `:`. Nil means `uid`, else `user_id`, as
    /// Weibo and the providers-file default have it; empty means the answer never names the user.
    public var userIDFields: [String]?
    /// The JSON path of the user's display name; nil means `screen_name`.
    public var userNameField: String?

    /// Creates a layout; the defaults are the RFC 6749 one with the `uid`/`user_id` and `screen_name` fallbacks.
    public init(tokensAt: String? = nil, userIDFields: [String]? = nil, userNameField: String? = nil) {
        self.tokensAt = tokensAt
        self.userIDFields = userIDFields
        self.userNameField = userNameField
    }
}
