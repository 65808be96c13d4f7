import Foundation

/// What the broker takes from an issuer's discovery document (OpenID Connect Discovery 1.0 §3), checked where it enters.
///
/// The document is hostile input like any provider answer: it is read only up
/// to ``maximumDocumentBytes``, its `issuer` must equal the configured issuer
/// byte for byte (§4.3, which stops one issuer's document impersonating
/// another), and every endpoint must be an absolute URL of the issuer's own
/// scheme, without a fragment, of at most ``maximumURLBytes`` visible ASCII bytes.
public struct OIDCProviderMetadata: Sendable, Equatable {
    /// `issuer`, equal to the configured issuer.
    public let issuer: String
    /// `authorization_endpoint`.
    public let authorizationEndpoint: String
    /// `token_endpoint`.
    public let tokenEndpoint: String
    /// `userinfo_endpoint`, when the document names one.
    public let userinfoEndpoint: String?
    /// `revocation_endpoint` (RFC 8414 §2, RFC 7009), when the document names one.
    public let revocationEndpoint: String?
    /// `token_endpoint_auth_methods_supported`; nil when absent (then `client_secret_basic`, §3).
    public let tokenEndpointAuthMethods: [String]?
    /// `code_challenge_methods_supported` (RFC 8414 §2); nil when absent.
    public let codeChallengeMethods: [String]?
    /// `authorization_response_iss_parameter_supported` (RFC 9207 §3): every callback then carries `iss`.
    public var sendsIssuerParameter: Bool = false

    /// The largest document read; real ones are 1–10 KiB.
    public static let maximumDocumentBytes = 64 * 1024
    /// The longest endpoint URL accepted.
    public static let maximumURLBytes = 2048
    /// The most entries read from a list of supported methods.
    static let maximumListEntries = 64

    /// Creates metadata; for tests and for ``parse(_:issuer:)``.
    public init(
        issuer: String, authorizationEndpoint: String, tokenEndpoint: String, userinfoEndpoint: String? = nil,
        revocationEndpoint: String? = nil, tokenEndpointAuthMethods: [String]? = nil, codeChallengeMethods: [String]? = nil
    ) {
        self.issuer = issuer
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.userinfoEndpoint = userinfoEndpoint
        self.revocationEndpoint = revocationEndpoint
        self.tokenEndpointAuthMethods = tokenEndpointAuthMethods
        self.codeChallengeMethods = codeChallengeMethods
    }

    /// Where the document of `issuer` lives: the issuer without a trailing `/`, then `/.well-known/openid-configuration` (§4).
    public static func documentURL(issuer: String) -> String {
        var base = issuer
        while base.hasSuffix("/") { base.removeLast() }
        return base + "/.well-known/openid-configuration"
    }

    /// The metadata in `bytes`, the document of the configured `issuer`, or why it is refused (a phrase for logs and `/providers`).
    public static func parse(_ bytes: [UInt8], issuer: String) -> Result<OIDCProviderMetadata, OIDCDocumentProblem> {
        guard bytes.count <= maximumDocumentBytes else {
            return .failure(OIDCDocumentProblem("the document is larger than \(maximumDocumentBytes) bytes"))
        }
        guard case .object(let fields) = ResponseBody(bytes).parse(acceptForm: false) else {
            return .failure(OIDCDocumentProblem("the document is not a JSON object"))
        }
        guard let named = fields["issuer"] as? String else {
            return .failure(OIDCDocumentProblem("the document has no issuer"))
        }
        // OIDC Discovery §4.3: the issuer in the document MUST be identical to the one the document was read for.
        guard ExactKey.same(named, issuer) else {
            let hint = named.contains("{") ? "; it is a multi-tenant template: configure the tenant's own issuer" : ""
            return .failure(OIDCDocumentProblem("the document's issuer is not the configured issuer (OIDC Discovery §4.3)\(hint)"))
        }
        let scheme = URLComponents(string: issuer)?.scheme?.lowercased() ?? "https"
        do throws(OIDCDocumentProblem) {
            guard let authorization = try endpoint(fields, "authorization_endpoint", scheme: scheme) else {
                throw OIDCDocumentProblem("the document has no authorization_endpoint")
            }
            guard let token = try endpoint(fields, "token_endpoint", scheme: scheme) else {
                throw OIDCDocumentProblem("the document has no token_endpoint")
            }
            var metadata = OIDCProviderMetadata(
                issuer: named, authorizationEndpoint: authorization, tokenEndpoint: token,
                userinfoEndpoint: try endpoint(fields, "userinfo_endpoint", scheme: scheme),
                revocationEndpoint: try endpoint(fields, "revocation_endpoint", scheme: scheme),
                tokenEndpointAuthMethods: try list(fields, "token_endpoint_auth_methods_supported"),
                codeChallengeMethods: try list(fields, "code_challenge_methods_supported"))
            // Only JSON true or false counts; anything else is as good as absent.
            if let flag = JSONBoolean.value(fields["authorization_response_iss_parameter_supported"]) {
                metadata.sendsIssuerParameter = flag
            }
            return .success(metadata)
        } catch {
            return .failure(error)
        }
    }

    /// The endpoint URL at `key`: nil when absent or null; refused unless an absolute URL of `scheme` with a host and no fragment.
    static func endpoint(_ fields: [String: Any], _ key: String, scheme: String) throws(OIDCDocumentProblem) -> String? {
        guard let raw = fields[key], !(raw is NSNull) else { return nil }
        guard let text = raw as? String, !text.isEmpty, text.utf8.count <= maximumURLBytes,
            text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }),
            let parsed = URLComponents(string: text), parsed.scheme?.lowercased() == scheme,
            let host = parsed.host, !host.isEmpty, parsed.fragment == nil, parsed.user == nil, parsed.password == nil
        else {
            throw OIDCDocumentProblem("\(key) is not an absolute \(scheme) URL without a fragment")
        }
        return text
    }

    /// The list of short method names at `key`: nil when absent or null; refused unless an array of strings.
    static func list(_ fields: [String: Any], _ key: String) throws(OIDCDocumentProblem) -> [String]? {
        guard let raw = fields[key], !(raw is NSNull) else { return nil }
        guard let items = raw as? [Any], items.count <= maximumListEntries else {
            throw OIDCDocumentProblem("\(key) is not a list of at most \(maximumListEntries) names")
        }
        var names: [String] = []
        for item in items {
            guard let name = item as? String, name.utf8.count <= 64 else {
                throw OIDCDocumentProblem("\(key) holds a value that is not a short name")
            }
            names.append(name)
        }
        return names
    }
}

/// Why a discovery document was refused: a phrase naming the check, never the document's text.
public struct OIDCDocumentProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// The phrase.
    public let description: String

    /// Wraps `description`.
    init(_ description: String) {
        self.description = description
    }
}
