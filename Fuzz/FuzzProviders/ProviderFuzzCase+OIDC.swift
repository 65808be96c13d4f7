#if FUZZING
import BrokerCrypto
import Foundation
import FuzzSupport
@testable import BrokerCore

/// An OpenID Connect ID token as a token endpoint hands it over: claims the provider chose, checked as at sign-in.
extension ProviderFuzzCase {
    /// The issuer, client and nonce the fuzzed tokens are checked against.
    static let idTokenIssuer = "https://issuer.example", idTokenClient = "fuzz-client", idTokenNonce = "fuzz-nonce-SENTINEL"

    /// The payload as the `id_token` value: a JSON object becomes the claims of a compact JWS (RS256 header, fixed
    /// signature bytes), anything else is taken as the token text itself.
    var idToken: String {
        let text = answer.payloadText
        guard text.hasPrefix("{") else { return text }
        let header = Base64URL.encode(Array(#"{"alg":"RS256","typ":"JWT"}"#.utf8))
        return header + "." + Base64URL.encode(Array(text.utf8)) + ".c2lnbmF0dXJl"
    }

    /// A subject of 1–255 printable ASCII bytes, or a short refusal that does not repeat the nonce; never a trap.
    func checkIDToken() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        do {
            let token = try OIDCIDToken.verify(
                idToken, issuer: Self.idTokenIssuer, clientID: Self.idTokenClient, nonce: Self.idTokenNonce, now: now,
                step: ProviderStep.tokenExchange.rawValue)
            let subject = token.subject.utf8
            require((1...255).contains(subject.count), "an ID token subject of \(subject.count) bytes accepted")
            // Printable ASCII as the project spells it everywhere: space to `~` (OIDC Core §2 allows any ASCII in `sub`).
            require(subject.allSatisfy { (0x20...0x7E).contains($0) }, "an ID token subject with unprintable bytes accepted")
        } catch {
            checkRefusal(error, secrets: [Self.idTokenNonce])
        }
    }
}
#endif
