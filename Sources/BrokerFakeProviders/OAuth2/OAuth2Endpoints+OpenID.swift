import BrokerCrypto
import BrokerHTTP
import Foundation

extension OAuth2Endpoints {
    /// The issuer this provider is asked as: the configured ``FakeOAuth2Provider/Configuration/openIDIssuer``, else `http://` plus the request's `Host`.
    func issuer(_ request: Request) -> String {
        configuration.openIDIssuer ?? "http://" + (request.headers["Host"] ?? "127.0.0.1")
    }

    /// Where the discovery document is served: under the stand-in issuer's host and path, else at the root.
    static func discoveryPath(_ configuration: FakeOAuth2Provider.Configuration) -> String {
        let wellKnown = "/.well-known/openid-configuration"
        guard let issuer = configuration.openIDIssuer, let schemeEnd = issuer.range(of: "://") else { return wellKnown }
        return "/" + issuer[schemeEnd.upperBound...] + wellKnown
    }

    /// `GET /.well-known/openid-configuration`: the discovery document (OIDC Discovery §3), or 503 while ``FakeOAuth2Provider/Behaviour/discoveryDown``.
    ///
    /// It lists the client authentication the token endpoint demands (both
    /// when it demands none) and S256 unless the provider ignores or forbids PKCE.
    func discovery(_ request: Request) -> Response {
        let down = state.withLock { s -> Bool in
            s.ledger.discoveryCalls += 1
            return s.behaviour.discoveryDown
        }
        if down {
            return FakeWire.answer(.serviceUnavailable, "application/json", "{\"error\":\"temporarily_unavailable\"}")
        }
        let issuer = issuer(request)
        // A stand-in's paths are `/<host><path>`, so `https:/` before them gives the real provider's URLs.
        let base = configuration.openIDIssuer == nil ? issuer : "https:/"
        let paths = configuration.paths
        var fields: [(String, String)] = [
            ("issuer", JSONString.quote(issuer)),
            ("authorization_endpoint", JSONString.quote(base + paths.authorize)),
            ("token_endpoint", JSONString.quote(base + paths.token)),
            ("jwks_uri", JSONString.quote(issuer + "/jwks")),
            ("response_types_supported", "[\"code\"]"),
            ("subject_types_supported", "[\"public\"]"),
            ("id_token_signing_alg_values_supported", "[\"RS256\"]"),
        ]
        if let user = paths.user { fields.append(("userinfo_endpoint", JSONString.quote(base + user))) }
        if let revoke = paths.revoke { fields.append(("revocation_endpoint", JSONString.quote(base + revoke))) }
        let methods: String =
            switch configuration.quirks.clientAuthentication {
            case nil: "[\"client_secret_basic\",\"client_secret_post\"]"
            case .basic: "[\"client_secret_basic\"]"
            case .body: "[\"client_secret_post\"]"
            }
        fields.append(("token_endpoint_auth_methods_supported", methods))
        if configuration.pkce == .required || configuration.pkce == .optional {
            fields.append(("code_challenge_methods_supported", "[\"S256\"]"))
        }
        let body = "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
        return FakeWire.answer(.ok, "application/json", body, extra: [("Cache-Control", "public, max-age=3600")])
    }

    /// `outcome` with an ID token added, when this is an OpenID provider answering a code exchange with tokens.
    func withIDToken(_ outcome: OAuth2ProviderState.TokenOutcome, issuer: String) -> OAuth2ProviderState.TokenOutcome {
        guard configuration.openID, case .tokens(var tokens) = outcome else { return outcome }
        let fault = state.withLock { $0.behaviour.idTokenFault }
        tokens.idToken = idToken(for: tokens, issuer: issuer, fault: fault)
        return .tokens(tokens)
    }

    /// A compact JWS (RFC 7515 §7.1) with an RS256 header, the claims of OIDC Core §2 and 256 random signature bytes
    /// no key verifies: the broker may skip the signature check (OIDC Core §3.1.3.7), so nothing signs it. Nil for ``FakeOAuth2Provider/IDTokenFault/absent``.
    func idToken(for tokens: IssuedTokens, issuer: String, fault: FakeOAuth2Provider.IDTokenFault?) -> String? {
        if fault == .absent { return nil }
        let now = Int(configuration.now().timeIntervalSince1970)
        var claims: [(String, String)] = [
            ("iss", JSONString.quote(fault == .wrongIssuer ? "https://elsewhere.example" : issuer)),
            ("sub", JSONString.quote(tokens.uid)),
            ("iat", String(now - (fault == .expired ? 7200 : 0))),
            ("exp", String(now + (fault == .expired ? -3600 : 3600))),
        ]
        switch fault {
        case .wrongAudience: claims.append(("aud", JSONString.quote("another-client")))
        case .severalAudiences: claims.append(("aud", "[\(JSONString.quote(configuration.clientID)),\"another-client\"]"))
        default: claims.append(("aud", JSONString.quote(configuration.clientID)))
        }
        switch fault {
        case .missingNonce: break
        case .wrongNonce: claims.append(("nonce", "\"not-the-nonce-that-was-sent\""))
        default: if let nonce = tokens.nonce { claims.append(("nonce", JSONString.quote(nonce))) }
        }
        if let login = configuration.login { claims.append(("preferred_username", JSONString.quote(login))) }
        if let name = configuration.displayName { claims.append(("name", JSONString.quote(name))) }
        let header = "{\"alg\":\"RS256\",\"typ\":\"JWT\",\"kid\":\"fake-1\"}"
        let payload = "{" + claims.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
        return Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8)) + "."
            + Base64URL.encode(SecureRandom.bytes(256))
    }
}
