import BrokerCrypto
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerCore

/// The ID token checks of OIDC Core §3.1.3.7 on hostile input: each claim refused alone, nothing trapping, nothing echoed.
struct OIDCIDTokenTests {
    static let issuer = GoogleOpenID.issuer
    static let clientID = GoogleOpenID.clientID
    static let nonce = "n-0S6_WzA2Mj-SENTINEL"

    /// A compact JWS with `header` and `claims` as JSON texts.
    static func jws(header: String = #"{"alg":"RS256","typ":"JWT"}"#, _ claims: String, signature: String = "c2lnbmF0dXJl") -> String {
        Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8)) + "." + signature
    }

    /// Claims that pass, with `change` applied to their JSON text pairs.
    static func claims(_ replacing: [String: String] = [:], removing: Set<String> = []) -> String {
        var pairs: [String: String] = [
            "iss": "\"\(issuer)\"", "aud": "\"\(clientID)\"", "sub": "\"110169484474386276334\"",
            "exp": String(Int(Date.fixture.timeIntervalSince1970) + 3600), "nonce": "\"\(nonce)\"", "name": "\"Ada Lovelace\"",
        ]
        for (key, value) in replacing { pairs[key] = value }
        for key in removing { pairs[key] = nil }
        return "{" + pairs.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"
    }

    static func verify(_ token: Any?, nonce: String? = nonce, now: Date = .fixture) throws(BrokerError) -> OIDCIDToken {
        try OIDCIDToken.verify(token, issuer: issuer, clientID: clientID, nonce: nonce, now: now, step: "token_exchange")
    }

    /// The reason a refusal gives, or nil when `token` passes.
    static func refusal(_ token: Any?, nonce: String? = nonce, now: Date = .fixture) -> String? {
        do {
            _ = try verify(token, nonce: nonce, now: now)
            return nil
        } catch {
            guard case .upstreamError(let step, let reason) = error, step == "token_exchange" else { return "\(error)" }
            return reason
        }
    }

    @Test func aGoodTokenNamesTheUserBySubAndTheNameToShow() throws {
        let token = try Self.verify(Self.jws(Self.claims()))
        #expect(token.subject == "110169484474386276334")
        #expect(token.displayName == "Ada Lovelace")
        let google = try Self.verify(GoogleOpenID.idToken(nonce: Self.nonce))
        #expect(google.subject == GoogleOpenID.subject)
    }

    @Test(arguments: [
        (#""https://accounts.google.com/""#, "iss"), (#""https://ACCOUNTS.google.com""#, "iss"), ("42", "iss"),
    ])
    func anotherIssuerIsRefused(value: String, claim: String) {
        #expect(Self.refusal(Self.jws(Self.claims([claim: value]))) == "the id_token's iss is not the issuer")
        #expect(Self.refusal(Self.jws(Self.claims(removing: [claim]))) == "the id_token's iss is not the issuer")
    }

    @Test func anIssuerAliasItsPresetKnowsIsTakenAndNoOther() throws {
        let bare = Self.jws(Self.claims(["iss": #""accounts.google.com""#]))
        #expect(Self.refusal(bare) == "the id_token's iss is not the issuer")
        let token = try OIDCIDToken.verify(
            bare, issuer: Self.issuer, clientID: Self.clientID, nonce: Self.nonce, now: .fixture, step: "token_exchange",
            issuerAliases: ["accounts.google.com"])
        #expect(token.subject == "110169484474386276334")
        let registry = try ProviderRegistry.load(environment: BrokerHarness.environment, providersFile: nil)
        #expect(registry.provider(named: "google")?.oidcOptions.idTokenIssuerAliases == ["accounts.google.com"])
    }

    @Test func theAudienceMustHoldThisClientAndSeveralNeedAnAuthorizedParty() {
        let client = "\"\(Self.clientID)\""
        #expect(Self.refusal(Self.jws(Self.claims(["aud": "\"someone-else\""]))) == "the id_token's aud does not hold this client's id")
        #expect(Self.refusal(Self.jws(Self.claims(["aud": "[\"someone-else\"]"]))) == "the id_token's aud does not hold this client's id")
        #expect(Self.refusal(Self.jws(Self.claims(["aud": "[\(client)]"]))) == nil)
        #expect(Self.refusal(Self.jws(Self.claims(["aud": "[\(client),\"other\"]"]))) == "the id_token has several audiences and no azp")
        #expect(Self.refusal(Self.jws(Self.claims(["aud": "[\(client),\"other\"]", "azp": client]))) == nil)
        #expect(Self.refusal(Self.jws(Self.claims(["azp": "\"other\""]))) == "the id_token's azp is not this client's id")
        for bad in ["[]", "[1]", "{}", "null", "7"] {
            #expect(Self.refusal(Self.jws(Self.claims(["aud": bad]))) == "the id_token's aud is not a string or an array of strings")
        }
    }

    @Test func expiryAllowsALittleSkewAndNeverTrapsOnHugeOrOddNumbers() {
        let now = Date.fixture
        let past = Int(now.timeIntervalSince1970)
        #expect(Self.refusal(Self.jws(Self.claims(["exp": String(past - 59)]))) == nil)
        #expect(Self.refusal(Self.jws(Self.claims(["exp": String(past - 61)]))) == "the id_token has expired")
        #expect(Self.refusal(Self.jws(Self.claims(["exp": "1e300"]))) == nil)
        #expect(Self.refusal(Self.jws(Self.claims(["exp": "-9223372036854775808"]))) == "the id_token has expired")
        #expect(Self.refusal(Self.jws(Self.claims(["exp": "99999999999999999999999999"]))) == nil)
        #expect(Self.refusal(Self.jws(Self.claims(["exp": String(past) + ".5"]))) == nil)
        for odd in ["\"\(past + 3600)\"", "true", "null", "[1]"] {
            #expect(Self.refusal(Self.jws(Self.claims(["exp": odd]))) == "the id_token has no numeric exp")
        }
        #expect(Self.refusal(Self.jws(Self.claims(removing: ["exp"]))) == "the id_token has no numeric exp")
    }

    @Test func theNonceMustBeTheFlowsWhenTheFlowSentOne() {
        #expect(Self.refusal(Self.jws(Self.claims(["nonce": "\"other\""]))) == "the id_token's nonce is not the one this sign-in sent")
        #expect(Self.refusal(Self.jws(Self.claims(["nonce": "7"]))) == "the id_token has no nonce")
        #expect(Self.refusal(Self.jws(Self.claims(removing: ["nonce"]))) == "the id_token has no nonce")
        // A flow of the previous version sent none, so there is nothing to compare.
        #expect(Self.refusal(Self.jws(Self.claims(removing: ["nonce"])), nonce: nil) == nil)
    }

    @Test func subIsOneTo255PrintableASCIICharacters() throws {
        #expect(try Self.verify(Self.jws(Self.claims(["sub": "\"\(String(repeating: "a", count: 255))\""]))).subject.utf8.count == 255)
        for bad in ["\"\"", "\"\(String(repeating: "a", count: 256))\"", "\"caf\\u00e9\"", "\"a\\nb\"", "42", "null"] {
            #expect(
                Self.refusal(Self.jws(Self.claims(["sub": bad])))
                    == "the id_token's sub is not 1 to 255 printable ASCII characters")
        }
    }

    @Test func whatIsNotACompactSignedJWTIsRefused() {
        let claims = Self.claims()
        #expect(Self.refusal(nil) == "the token response has no id_token")
        #expect(Self.refusal(NSNull()) == "the token response has no id_token")
        #expect(Self.refusal(42) == "the id_token is not a string")
        #expect(Self.refusal("") == "the id_token is empty or longer than 16384 bytes")
        #expect(Self.refusal(String(repeating: "a", count: 16_385)) == "the id_token is empty or longer than 16384 bytes")
        #expect(Self.refusal("a.b.c.d.e") == "the id_token is encrypted (JWE), which the broker does not read")
        #expect(Self.refusal("abc.def") == "the id_token is not a compact JWS of three base64url parts")
        #expect(Self.refusal(Self.jws(claims, signature: "")) == "the id_token is not a compact JWS of three base64url parts")
        #expect(Self.refusal(Self.jws(claims, signature: "!!")) == "the id_token is not a compact JWS of three base64url parts")
        #expect(Self.refusal(Self.jws(header: #"{"alg":"none"}"#, claims)) == "the id_token's header names no signing alg")
        #expect(Self.refusal(Self.jws(header: #"{"typ":"JWT"}"#, claims)) == "the id_token's header names no signing alg")
        #expect(Self.refusal(Self.jws(header: "[1]", claims)) == "the id_token's header is not a base64url JSON object")
        #expect(Self.refusal(Self.jws("not json")) == "the id_token's payload is not a base64url JSON object")
        #expect(Self.refusal("e30.%%%.c2ln") == "the id_token's header names no signing alg")
    }

    @Test func noRefusalRepeatsTheTokenOrTheNonce() {
        let token = Self.jws(Self.claims(["nonce": "\"SENTINEL-other-nonce\""]))
        let reason = Self.refusal(token) ?? ""
        #expect(!reason.contains("SENTINEL") && !reason.contains(token))
    }
}
