import BrokerCore
import BrokerCrypto
import Testing

/// PKCE S256: the RFC 7636 vector and the shape and freshness of verifiers.
struct PKCETests {
    @Test func rfc7636AppendixBVector() {
        let octets: [UInt8] = [
            116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186,
            22, 212, 37, 77, 105, 214, 191, 240, 91, 88, 5, 88, 83, 132, 141, 121,
        ]
        let verifier = Base64URL.encode(octets)
        #expect(verifier == "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        #expect(PKCE.challenge(for: verifier) == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    }

    @Test func tenThousandVerifiersAreDistinctUnreservedAnd256Bits() {
        let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        var seen = Set<String>()
        for _ in 0..<10_000 {
            let verifier = PKCE.makeVerifier()
            // RFC 7636 §4.1: 43 to 128 characters of the unreserved set.
            #expect((43...128).contains(verifier.count))
            #expect(verifier.allSatisfy(unreserved.contains))
            #expect(Base64URL.decode(verifier)?.count == 32)
            seen.insert(verifier)
        }
        #expect(seen.count == 10_000)
    }

    @Test func challengeIsUnpaddedBase64URLOfSHA256() {
        let verifier = PKCE.makeVerifier()
        let challenge = PKCE.challenge(for: verifier)
        #expect(Base64URL.decode(challenge) == SHA256.hash(Array(verifier.utf8)))
        #expect(!challenge.contains("=") && !challenge.contains("+") && !challenge.contains("/"))
        #expect(PKCE.challenge(for: verifier + "x") != challenge)
    }
}
