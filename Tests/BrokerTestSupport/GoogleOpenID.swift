import BrokerCore
import BrokerCrypto
import Foundation

/// Google as an OpenID provider in tests: its discovery document, and ID tokens shaped like its own.
public enum GoogleOpenID {
    /// The issuer of the `google` preset.
    public static let issuer = "https://accounts.google.com"
    /// The client id the tests' environments give Google.
    public static let clientID = "google-id.apps.googleusercontent.com"
    /// The user the tests' Google accounts belong to.
    public static let subject = "110169484474386276334"

    /// Google's discovery document, as `https://accounts.google.com/.well-known/openid-configuration` serves it.
    public static let document = #"""
        {"issuer":"https://accounts.google.com","authorization_endpoint":"https://accounts.google.com/o/oauth2/v2/auth",
        "device_authorization_endpoint":"https://oauth2.googleapis.com/device/code","token_endpoint":"https://oauth2.googleapis.com/token",
        "userinfo_endpoint":"https://openidconnect.googleapis.com/v1/userinfo","revocation_endpoint":"https://oauth2.googleapis.com/revoke",
        "jwks_uri":"https://www.googleapis.com/oauth2/v3/certs",
        "response_types_supported":["code","token","id_token","code token","code id_token","token id_token","code token id_token","none"],
        "subject_types_supported":["public"],"id_token_signing_alg_values_supported":["RS256"],"scopes_supported":["openid","email","profile"],
        "token_endpoint_auth_methods_supported":["client_secret_post","client_secret_basic"],
        "claims_supported":["aud","email","email_verified","exp","family_name","given_name","iat","iss","name","picture","sub"],
        "code_challenge_methods_supported":["plain","S256"],
        "grant_types_supported":["authorization_code","refresh_token","urn:ietf:params:oauth:grant-type:device_code","urn:ietf:params:oauth:grant-type:jwt-bearer"]}
        """#

    /// The document's metadata, parsed as the broker parses it.
    public static var metadata: OIDCProviderMetadata {
        get throws { try OIDCProviderMetadata.parse(Array(document.utf8), issuer: issuer).get() }
    }

    /// Loads the document into `registry`'s discovery cache the way the broker does at start, through an upstream that serves it.
    public static func discover(in registry: ProviderRegistry) async {
        await OIDCDiscovery(registry: registry, upstream: DocumentUpstream()).loadPending()
    }

    /// A compact JWS of Google's shape (RS256 header, signature bytes no key checks) with these claims.
    public static func idToken(
        nonce: String?, subject: String = subject, audience: String = clientID, issuer: String = issuer,
        expires: Date = Date.fixture.addingTimeInterval(3600), name: String? = "Ada Lovelace"
    ) -> String {
        var claims: [String: Any] = [
            "iss": issuer, "aud": audience, "azp": audience, "sub": subject, "email": "ada@example.com", "email_verified": true,
            "iat": Int(expires.timeIntervalSince1970) - 3600, "exp": Int(expires.timeIntervalSince1970),
        ]
        if let nonce { claims["nonce"] = nonce }
        if let name { claims["name"] = name }
        let payload = (try? JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])) ?? Data()
        let header = #"{"alg":"RS256","kid":"test-key","typ":"JWT"}"#
        return Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload)) + "."
            + Base64URL.encode([UInt8](repeating: 0x5A, count: 256))
    }

    /// Answers the discovery URL with ``document`` and anything else with 404.
    private struct DocumentUpstream: UpstreamClient {
        func send(_ request: UpstreamRequest) async throws(UpstreamError) -> UpstreamResponse {
            guard request.url == OIDCProviderMetadata.documentURL(issuer: GoogleOpenID.issuer) else { return UpstreamResponse(status: 404) }
            return UpstreamResponse(status: 200, headers: [("Content-Type", "application/json")], body: Array(document.utf8))
        }
    }
}
