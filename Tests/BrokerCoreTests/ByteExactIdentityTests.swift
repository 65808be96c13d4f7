import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerCore

/// Identities (account ids, uids, provider names, issuers, secrets) are compared as exact bytes, never by Swift's
/// canonical equivalence, and user ids are refused where they could not be shown or stored without ambiguity.
struct ByteExactIdentityTests {
    static let composed = "caf\u{E9}"
    static let decomposed = "cafe\u{301}"

    @Test func exactKeysOfEquivalentSpellingsDiffer() {
        #expect(Self.composed == Self.decomposed)
        #expect(ExactKey(Self.composed) != ExactKey(Self.decomposed))
        #expect(ExactKey("K") != ExactKey("\u{212A}"))
        #expect(Set([ExactKey(Self.composed), ExactKey(Self.decomposed), ExactKey(Self.composed)]).count == 2)
        #expect(ExactKey("a") < ExactKey("b") && ExactKey("Z") < ExactKey("a") && ExactKey("z") < ExactKey("\u{E9}"))
    }

    @Test func secretsCompareTheirBytes() {
        #expect(Secret("tok-" + Self.composed) != Secret("tok-" + Self.decomposed))
        #expect(Secret("tok-" + Self.composed) == Secret("tok-" + Self.composed))
        #expect(Set([Secret("K1"), Secret("\u{212A}1")]).count == 2)
    }

    @Test func aProviderIsFoundByItsExactName() {
        let registry = ProviderRegistry(providers: [ProviderConfiguration(name: "Kloud", kind: .oauth2)])
        #expect(registry.provider(named: "Kloud")?.name == "Kloud")
        #expect(registry.provider(named: "\u{212A}loud") == nil)
    }

    @Test func anIssuerIsComparedAsBytes() async throws {
        try await BrokerHarness.with { broker in
            var configuration = ProviderConfiguration(
                name: "acme", kind: .oauth2, clientID: "acme-client", clientSecret: Secret("acme-secret"),
                authorizeURL: "https://acme.example/authorize", tokenURL: "https://acme.example/token")
            configuration.issuer = "https://" + Self.composed + ".example"
            let provider = try OAuth2Settings(configuration)
            #expect(throws: Never.self) {
                try OAuth2Exchange.checkIssuer(
                    "https://" + Self.composed + ".example", provider: provider, among: broker.authorization.registry)
            }
            #expect(throws: BrokerError.self) {
                try OAuth2Exchange.checkIssuer(
                    "https://" + Self.decomposed + ".example", provider: provider, among: broker.authorization.registry)
            }
        }
    }

    @Test(arguments: [
        ("", "is empty"), (String(repeating: "a", count: 129), "is longer than 128 bytes"),
        (String(repeating: "\u{E9}", count: 65), "is longer than 128 bytes"),
        ("a\u{0}b", "has control characters"), ("a\nb", "has control characters"), ("a\u{7F}", "has control characters"),
        ("a\u{85}", "has control characters"), ("\u{202E}nimda", "has bidirectional formatting characters"),
        ("a\u{2066}b", "has bidirectional formatting characters"), ("a\u{200F}", "has bidirectional formatting characters"),
        ("a\u{61C}", "has bidirectional formatting characters"), ("\u{FEFF}1", "has invisible characters"),
        ("a\u{200B}b", "has invisible characters"), ("a\u{2060}", "has invisible characters"),
    ])
    func userIDsThatCannotBeShownUnambiguouslyAreRefused(uid: String, problem: String) {
        #expect(ProviderUserID.problem(with: uid) == problem)
        #expect(throws: BrokerError.upstreamError(step: "user_info", reason: "the user id " + problem)) {
            try ProviderUserID.check(uid, step: "user_info")
        }
    }

    @Test(arguments: [
        "4242", composed, decomposed, String(repeating: "a", count: 128), String(repeating: "\u{6F22}", count: 42),
        "user@example.com", "a/b", "a b", "\u{1F600}", "\u{1F469}\u{200D}\u{1F4BB}", "\u{645}\u{6CC}\u{200C}\u{62E}",
    ])
    func userIDsAreKeptAsSent(uid: String) {
        #expect(ProviderUserID.problem(with: uid) == nil)
    }
}
