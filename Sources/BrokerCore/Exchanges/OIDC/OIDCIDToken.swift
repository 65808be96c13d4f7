import BrokerCrypto
import Foundation

/// The ID token of a token answer, checked as OpenID Connect Core §3.1.3.7 asks of a code-flow client: who the user is.
///
/// The token arrives in the token endpoint's answer, over the TLS connection
/// the broker opened to the endpoint the issuer's document names, in exchange
/// for a code only this client could redeem; OIDC Core §3.1.3.7 step 6 lets
/// such a client use the TLS server validation in place of checking the
/// token's signature, so the JWS signature is not verified. The token must
/// still have the compact JWS shape (RFC 7515 §7.1: three base64url parts,
/// a header naming an `alg` other than `none`), and its claims must say:
/// `iss` is the issuer, byte for byte, or an alias its preset knows (step 2); `aud` holds the client id,
/// and with several audiences `azp` is present and is the client id
/// (steps 3–5); `exp` is not past, with ``leeway`` for clock skew (step 9);
/// `nonce` is the one the flow sent (step 11); `sub` is 1–255 ASCII
/// characters (OIDC Core §2). Every failure names the claim, never its value.
struct OIDCIDToken: Sendable {
    /// `sub`: the user's id at the issuer.
    let subject: String
    /// A name to show: `preferred_username`, `nickname`, `name` or `email`, the first present.
    let displayName: String?

    /// The longest ID token read, in bytes.
    static let maximumBytes = 16_384
    /// The longest decoded header read, in bytes.
    static let maximumHeaderBytes = 2_048
    /// How far past `exp` a token is still taken, in seconds, for clocks that disagree a little.
    static let leeway: Double = 60
    /// The longest `sub` (OIDC Core §2).
    static let maximumSubjectBytes = 255
    /// The most audiences read.
    static let maximumAudiences = 64

    /// The checked claims of `raw` (the answer's `id_token` value), or an upstream error of `step` naming the failed check.
    static func verify(
        _ raw: Any?, issuer: String, clientID: String, nonce: String?, now: Date, step: String, issuerAliases: [String] = []
    ) throws(BrokerError) -> OIDCIDToken {
        func refuse(_ reason: String) -> BrokerError { .upstreamError(step: step, reason: reason) }
        guard let raw, !ProviderValue.isNull(raw) else { throw refuse("the token response has no id_token") }
        guard let token = raw as? String else { throw refuse("the id_token is not a string") }
        guard !token.isEmpty, token.utf8.count <= maximumBytes else {
            throw refuse("the id_token is empty or longer than \(maximumBytes) bytes")
        }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count == 5 { throw refuse("the id_token is encrypted (JWE), which the broker does not read") }
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty, !parts[2].isEmpty else {
            throw refuse("the id_token is not a compact JWS of three base64url parts")
        }
        guard let headerBytes = Base64URL.decode(String(parts[0])), headerBytes.count <= maximumHeaderBytes,
            let header = object(headerBytes)
        else {
            throw refuse("the id_token's header is not a base64url JSON object")
        }
        // OIDC Core §2: an ID token is signed; `none` is for clients that registered for it, and this one did not.
        guard let algorithm = header["alg"] as? String, !algorithm.isEmpty, algorithm.lowercased() != "none" else {
            throw refuse("the id_token's header names no signing alg")
        }
        guard Base64URL.decode(String(parts[2])) != nil else {
            throw refuse("the id_token is not a compact JWS of three base64url parts")
        }
        guard let payloadBytes = Base64URL.decode(String(parts[1])), let claims = object(payloadBytes) else {
            throw refuse("the id_token's payload is not a base64url JSON object")
        }
        guard let iss = claims["iss"] as? String, ExactKey.same(iss, issuer) || issuerAliases.contains(where: { ExactKey.same(iss, $0) })
        else {
            throw refuse("the id_token's iss is not the issuer")
        }
        try checkAudience(claims, clientID: clientID, refuse: refuse)
        guard let exp = numericDate(claims["exp"]) else { throw refuse("the id_token has no numeric exp") }
        // Doubles compare without trapping however large the claim; a NaN never gets here.
        guard exp + leeway > now.timeIntervalSince1970 else { throw refuse("the id_token has expired") }
        if let nonce {
            guard let claimed = claims["nonce"] as? String else { throw refuse("the id_token has no nonce") }
            guard ConstantTime.equals(claimed, nonce) else { throw refuse("the id_token's nonce is not the one this sign-in sent") }
        }
        guard let sub = claims["sub"] as? String, (1...maximumSubjectBytes).contains(sub.utf8.count),
            sub.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F })
        else {
            throw refuse("the id_token's sub is not 1 to \(maximumSubjectBytes) printable ASCII characters")
        }
        let name = ["preferred_username", "nickname", "name", "email"].lazy.compactMap { ProviderValue.displayName(claims[$0]) }.first
        return OIDCIDToken(subject: sub, displayName: name)
    }

    /// OIDC Core §3.1.3.7 steps 3–5: `aud` (a string or an array of strings) holds the client id; with more than
    /// one audience `azp` must be there, and an `azp` must be the client id.
    private static func checkAudience(
        _ claims: [String: Any], clientID: String, refuse: (String) -> BrokerError
    ) throws(BrokerError) {
        let audiences: [String]
        if let single = claims["aud"] as? String {
            audiences = [single]
        } else if let list = claims["aud"] as? [Any], (1...maximumAudiences).contains(list.count) {
            var strings: [String] = []
            for item in list {
                guard let text = item as? String else { throw refuse("the id_token's aud is not a string or an array of strings") }
                strings.append(text)
            }
            audiences = strings
        } else {
            throw refuse("the id_token's aud is not a string or an array of strings")
        }
        guard audiences.contains(where: { ExactKey.same($0, clientID) }) else {
            throw refuse("the id_token's aud does not hold this client's id")
        }
        if let azp = claims["azp"] {
            guard let party = azp as? String, ExactKey.same(party, clientID) else {
                throw refuse("the id_token's azp is not this client's id")
            }
        } else if audiences.count > 1 {
            throw refuse("the id_token has several audiences and no azp")
        }
    }

    /// A JSON object from `bytes`, or nil.
    private static func object(_ bytes: [UInt8]) -> [String: Any]? {
        guard bytes.first == UInt8(ascii: "{") else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(bytes), options: [])) as? [String: Any]
    }

    /// A finite JSON number that is not a boolean (RFC 7519 §2 NumericDate), as seconds since 1970.
    private static func numericDate(_ value: Any?) -> Double? {
        guard let number = JSONBoolean.number(value) else { return nil }
        let seconds = number.doubleValue
        return seconds.isFinite ? seconds : nil
    }
}
