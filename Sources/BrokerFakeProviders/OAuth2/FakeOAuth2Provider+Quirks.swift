import BrokerHTTP

extension FakeOAuth2Provider {
    /// How one real provider bends RFC 6749 beyond its dialect, as data: what it demands of a client and how it answers.
    ///
    /// The catalogue's providers each want something of their own: HTTP Basic or
    /// credentials in the body, a JSON token request, the scope under another
    /// parameter, extra authorize parameters, header fields on every call, a user
    /// endpoint asked by another scheme, by a POSTed GraphQL query or by RFC 7662
    /// introspection, revocation as a form, JSON or a bare Bearer token, and their
    /// own token answers and error shapes. Every value starts as "nothing demanded,
    /// the dialect's answer". A demand the client misses is refused in the
    /// provider's error shape and recorded in ``Ledger/violations``, so a test can
    /// name what the client got wrong.
    public struct Quirks: Sendable {
        /// How the client must authenticate at the token endpoint (RFC 6749 §2.3.1).
        public enum ClientAuthentication: Sendable, Equatable {
            /// `client_id` and `client_secret` in the body; an `Authorization` field is refused.
            case body
            /// HTTP Basic; a `client_secret` in the body is refused.
            case basic
        }

        /// The body of token and refresh requests.
        public enum RequestFormat: Sendable, Equatable {
            /// `application/x-www-form-urlencoded` (RFC 6749 §4.1.3).
            case form
            /// A JSON object of strings (Notion, Atlassian).
            case json
        }

        /// How the user endpoint must be asked.
        public enum UserRequest: Sendable, Equatable {
            /// `GET` with `Authorization: <scheme> <token>` (`Bearer`; Twitch's `OAuth`).
            case header(scheme: String)
            /// `POST` of a JSON body containing `containing` (a GraphQL query), with a Bearer token.
            case jsonPost(containing: String)
            /// RFC 7662 introspection: a form `POST` of `token` with the client's id and secret in the body.
            case introspection
        }

        /// What must accompany the token at the revocation endpoint.
        public enum RevocationClient: Sendable, Equatable {
            /// No client identification at all.
            case none
            /// `client_id` alone, no secret.
            case clientID
            /// The client's credentials, the way the token endpoint takes them.
            case credentials
        }

        /// How a revocation request must carry the token.
        public enum Revocation: Sendable, Equatable {
            /// A form with the token under `parameter` (RFC 7009 §2.1 names it `token`).
            case form(parameter: String, client: RevocationClient)
            /// A JSON `{"token": …}` with the client's credentials as the token endpoint takes them.
            case json
            /// The access token as `Authorization: Bearer`, and no body.
            case bearer
        }

        /// The client authentication the token endpoint demands; nil takes either, as RFC 6749 §2.3.1 allows.
        public var clientAuthentication: ClientAuthentication?
        /// The body format the token endpoint demands; nil reads a form and ignores anything else.
        public var tokenRequestFormat: RequestFormat?
        /// The authorize parameter carrying the scope (Slack's `user_scope`).
        public var scopeParameter = "scope"
        /// The scope the authorize request must carry in ``scopeParameter``; nil checks nothing.
        public var scope: String?
        /// Authorize parameters that must be present with exactly these values.
        public var authorizeParameters: [String: String] = [:]
        /// Header fields every call to the token, user and revocation endpoints must carry with exactly these values.
        public var headers: [String: String] = [:]
        /// The token answer's body for issued tokens (code exchange and refresh), replacing the dialect's.
        public var tokenAnswer: (@Sendable (TokenAnswer) -> String)?
        /// How the user endpoint must be asked; nil: the dialect's way, by `GET` only.
        public var userRequest: UserRequest?
        /// How revocation must be asked; nil: the dialect's way, with credentials checked only when sent.
        public var revocation: Revocation?
        /// Documents served at these paths to `GET` with a live access token as `Authorization: Bearer`, by path
        /// (Atlassian's `oauth/token/accessible-resources`); another request gets 401.
        public var resources: [String: String] = [:]
        /// What revocation answers (a body is labelled JSON), replacing the dialect's.
        public var revokeAnswer: (status: HTTPStatus, body: String?)?
        /// The token endpoint's error for an OAuth error code (`invalid_grant`, …), replacing the dialect's:
        /// its status, and its JSON body. A refused demand keeps its own status with this body.
        public var errorAnswer: (@Sendable (_ error: String) -> (HTTPStatus, String))?

        /// No quirks: the dialect as it is.
        public init() {}
    }

    /// What one token answer hands out, for ``Quirks/tokenAnswer`` to spell.
    public struct TokenAnswer: Sendable {
        /// The new access token.
        public var accessToken: String
        /// The refresh token, when one goes with this answer (none from a refresh that keeps its token).
        public var refreshToken: String?
        /// Seconds the access token lives.
        public var expiresIn: Int
        /// The scope granted, as asked for.
        public var scope: String?
        /// Whether this answers the refresh grant rather than the code exchange.
        public var refreshing: Bool
    }
}
