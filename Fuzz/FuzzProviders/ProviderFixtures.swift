#if FUZZING
import Foundation
@testable import BrokerCore

/// The fixed clock, credentials and request values every provider call runs with.
///
/// Each secret is distinctive (it has `#`, which no provider error summary
/// repeats) and at least 8 characters long, the shortest value the clients
/// redact, so finding one in an error means the client let it through.
enum ProviderFixtures {
    /// The clock reading an account is issued at: 2026-01-01T00:00:00Z.
    static let now = Date(timeIntervalSince1970: 1_767_225_600)

    /// The client secret of the OAuth 2.0 presets.
    static let clientSecret = "#client-secret-2f9c#"
    /// The consumer secret of the Twitter preset.
    static let consumerSecret = "#consumer-secret-77e1#"
    /// The TMDB v3 API key (not a JWT, so it travels as `api_key`).
    static let apiKey = "#tmdb-api-key-41d0#"

    /// The authorization code the exchange sends.
    static let code = "#auth-code-9a3b#"
    /// The PKCE verifier the exchange sends.
    static let codeVerifier = "#pkce-verifier-c5e8#"
    /// The refresh token the refresh sends.
    static let refreshToken = "#refresh-token-08fd#"
    /// The access token sent to the user endpoint.
    static let accessToken = "#access-token-6b27#"
    /// The OAuth 1.0a request token the access-token step signs with (not secret: it travels in the browser).
    static let requestToken = "Z6eEdO8MOmk394WozF5oKyuAv855l4Mlqo7hhlSLik"
    /// The OAuth 1.0a request token secret.
    static let requestTokenSecret = "#request-token-secret-e2a4#"
    /// The OAuth 1.0a verifier from the callback.
    static let verifier = "#oauth-verifier-1c6f#"
    /// The TMDB request token the session step sends (not secret: it travels in the browser).
    static let tmdbRequestToken = "ff5c7eeb5a8870efe3cd7fc5c282cffd26800ecd"
    /// The TMDB session id the account step sends.
    static let sessionID = "#tmdb-session-5d93#"

    /// The broker's redirect URI.
    static let redirectURI = "https://broker.example/callback"

    /// Preset credentials, as the operator sets them.
    static let environment: [String: String] = [
        "WEIBO_CLIENT_ID": "wb-client", "WEIBO_CLIENT_SECRET": clientSecret,
        "GITHUB_CLIENT_ID": "gh-client", "GITHUB_CLIENT_SECRET": clientSecret,
        "GOOGLE_CLIENT_ID": "go-client", "GOOGLE_CLIENT_SECRET": clientSecret,
        "TWITTER_CONSUMER_KEY": "tw-key", "TWITTER_CONSUMER_SECRET": consumerSecret,
        "TMDB_API_KEY": apiKey,
        "SLACK_CLIENT_ID": "2141029472.691202649728", "SLACK_CLIENT_SECRET": clientSecret,
        "HUBSPOT_CLIENT_ID": "hs-client", "HUBSPOT_CLIENT_SECRET": clientSecret,
    ]

    /// The preset called `name`, with the credentials above.
    static func preset(_ name: String) -> ProviderConfiguration {
        guard let provider = ProviderPresets.preset(named: name, environment: environment) else {
            fatalError("FuzzProviders: no preset named \(name)")
        }
        return provider
    }

    /// The settings `make` builds from `provider`; the presets here are complete, so a refusal is a broken fixture.
    static func settings<Settings>(_ provider: ProviderConfiguration, _ make: (ProviderConfiguration) throws -> Settings) -> Settings {
        do {
            return try make(provider)
        } catch {
            fatalError("FuzzProviders: \(provider.name) is not configured: \(error)")
        }
    }

    /// The presets the steps use, made once.
    static let weibo = preset("weibo")
    /// GitHub, for the user endpoint.
    static let github = preset("github")
    /// Google, for the refresh grant: the OpenID preset with the endpoints of Google's discovery document.
    static let google: ProviderConfiguration = {
        let metadata = OIDCProviderMetadata(
            issuer: "https://accounts.google.com", authorizationEndpoint: "https://accounts.google.com/o/oauth2/v2/auth",
            tokenEndpoint: "https://oauth2.googleapis.com/token", userinfoEndpoint: "https://openidconnect.googleapis.com/v1/userinfo",
            revocationEndpoint: "https://oauth2.googleapis.com/revoke",
            tokenEndpointAuthMethods: ["client_secret_post", "client_secret_basic"], codeChallengeMethods: ["plain", "S256"])
        return ProviderFixtures.settings(ProviderFixtures.preset("google")) { try $0.oauth2Configuration(discovered: metadata) }
    }()
    /// Twitter, for OAuth 1.0a.
    static let twitter = preset("twitter")
    /// TMDB, for v3 session authentication.
    static let tmdb = preset("tmdb")
    /// Slack, for a token answer read under a path.
    static let slack = preset("slack")
    /// HubSpot, for an introspection endpoint read through paths.
    static let hubspot = preset("hubspot")
}
#endif
