/// How the broker asks a provider's user endpoint whom an access token belongs to; the default is a GET with a Bearer token (RFC 6750 §2.1).
///
/// Twitch's validate endpoint wants `Authorization: OAuth <token>`; Linear
/// answers only GraphQL, so the question is a JSON body POSTed with the token;
/// HubSpot's is an RFC 7662 introspection endpoint that takes the token in a
/// form with the client's credentials. The providers file sets the same keys
/// (`user_auth_scheme`, `user_request_body`, `user_introspection`, `user_name_field`).
public struct UserInfoRequest: Sendable, Equatable {
    /// The scheme word of the `Authorization` header.
    public var authScheme: String
    /// A JSON body to POST (Linear's `{"query":"{ viewer { id name } }"}`); nil sends a GET.
    public var jsonBody: String?
    /// Whether the endpoint is an RFC 7662 §2.1 introspection endpoint: a form POST of `token` with client authentication.
    public var introspection: Bool
    /// The header field the token travels in instead of `Authorization: <scheme> <token>` (Shopify's
    /// `X-Shopify-Access-Token`, the field its API reads); nil for `Authorization`.
    public var tokenHeader: APITokenHeader? = nil
    /// The JSON path of the display name in the answer; nil means `screen_name`, else `login`, else `name`.
    public var userNameField: String?

    /// Creates a request description; the defaults are a Bearer GET and the usual name fields.
    public init(authScheme: String = "Bearer", jsonBody: String? = nil, introspection: Bool = false, userNameField: String? = nil) {
        self.authScheme = authScheme
        self.jsonBody = jsonBody
        self.introspection = introspection
        self.userNameField = userNameField
    }
}
