import BrokerFakeProviders
import BrokerHTTP
import Foundation

extension CatalogueCase {
    /// How one catalogue provider speaks OAuth 2.0 on the wire, as its documentation says: the one fake
    /// provider (``FakeOAuth2Provider``, RFC 6749 dialect) is configured from it, and the test reads what to expect.
    ///
    /// The provider's real endpoints are served as `/<host><path>` (the broker's calls arrive
    /// through ``HostRewritingUpstream``). Its demands become the fake's
    /// ``FakeOAuth2Provider/Quirks``, which refuses every request that misses one and records it
    /// in ``FakeOAuth2Provider/Ledger/violations``.
    struct Wire: Sendable {
        typealias Quirks = FakeOAuth2Provider.Quirks

        var authorizePath = "/authorize"
        var tokenPath = "/token"
        /// The refresh endpoint, when not the token endpoint.
        var refreshPath: String?
        var userPath: String? = "/user"
        var revokePath: String? = "/revoke"
        var clientAuth = Quirks.ClientAuthentication.body
        var jsonRequests = false
        var scopeParameter = "scope"
        /// The scope value the authorize request must carry; nil checks nothing.
        var scope: String?
        var authorizeParameters: [String: String] = [:]
        /// Whether the authorize request must carry an S256 challenge (true) or none (false); nil checks nothing.
        var pkce: Bool?
        /// Header fields every call of the broker must carry.
        var headers: [String: String] = [:]
        /// Whether refresh tokens are issued at all.
        var issuesRefreshTokens = true
        /// The token answer's `expires_in`; nil when the provider sends none (the fake's tokens then live an hour).
        var expiresIn: Int? = 3600
        /// The token answer's body; nil: RFC 6749 §5.1's.
        var answer: (@Sendable (FakeOAuth2Provider.TokenAnswer) -> String)?
        var userAsk = Quirks.UserRequest.header(scheme: "Bearer")
        var userAnswer = "{\"id\":4242,\"login\":\"ada\"}"
        /// The issuer of a provider that is also an OpenID provider, stood in for at its real host (``FakeOAuth2Provider/Configuration/openIDIssuer``).
        var openIDIssuer: String?
        /// Documents served to a Bearer `GET` with a live access token, by path (Atlassian's accessible resources).
        var resources: [String: String] = [:]
        /// How revocation names the token; nil: an RFC 7009 form with `token`.
        var revokeShape: Quirks.Revocation?
        /// Whether revocation names the access token (else the refresh token, when the account holds one).
        var revokesAccessToken = false
        var revokeAnswer: (status: HTTPStatus, body: String?) = (.ok, nil)
        /// The answer to a refused grant, in the provider's error shape.
        var errorAnswer: @Sendable (String) -> (HTTPStatus, String) = { (.badRequest, "{\"error\":\"\($0)\"}") }

        /// The fake provider's configuration: RFC 6749 at these paths, holding the client to these demands.
        func configuration(clientSecret: String) -> FakeOAuth2Provider.Configuration {
            var configuration = FakeOAuth2Provider.Configuration.rfc6749(clientSecret: clientSecret)
            configuration.paths = .init(
                authorize: authorizePath, token: tokenPath, refresh: refreshPath, user: userPath,
                revoke: revokePath)
            configuration.pkce = pkce.map { $0 ? .required : .forbidden } ?? .optional
            var quirks = Quirks()
            quirks.clientAuthentication = clientAuth
            quirks.tokenRequestFormat = jsonRequests ? .json : .form
            quirks.scopeParameter = scopeParameter
            quirks.scope = scope
            quirks.authorizeParameters = authorizeParameters
            quirks.headers = headers
            quirks.tokenAnswer = answer
            quirks.userRequest = userAsk
            quirks.revocation = revokeShape
            quirks.resources = resources
            if let openIDIssuer {
                configuration.openID = true
                configuration.openIDIssuer = openIDIssuer
            }
            quirks.revokeAnswer = revokeAnswer
            quirks.errorAnswer = errorAnswer
            configuration.quirks = quirks
            return configuration
        }

        /// The fake provider's behaviour: its token lifetime, its refresh policy and its user endpoint's answer.
        func behaviour(rotates: Bool) -> FakeOAuth2Provider.Behaviour {
            var behaviour = FakeOAuth2Provider.Behaviour(dialect: .rfc6749)
            behaviour.accessTokenLifetime = expiresIn ?? 3600
            behaviour.refreshedTokenLifetime = expiresIn ?? 3600
            behaviour.refreshTokens = !issuesRefreshTokens ? .none : rotates ? .rotate : .keep
            behaviour.userBody = userAnswer
            return behaviour
        }
    }
}
