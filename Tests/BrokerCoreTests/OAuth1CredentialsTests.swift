import BrokerCore
import BrokerTestSupport
import Testing

/// Credentials never print their secrets or token.
struct OAuth1CredentialsTests {
    static func make(
        token: String? = "370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb",
        tokenSecret: String? = "LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE"
    ) -> OAuth1Credentials {
        OAuth1Credentials(
            consumerKey: "xvz1evFS4wEEPTGEFPHBog", consumerSecret: "kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw",
            token: token, tokenSecret: tokenSecret)
    }

    @Test("description, debugDescription, interpolation and dump hide secrets and token")
    func redacted() {
        let credentials = Self.make()
        var dumped = ""
        dump(credentials, to: &dumped)
        for rendering in [credentials.description, String(reflecting: credentials), "\(credentials)", dumped] {
            #expect(!rendering.contains("kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw"))
            #expect(!rendering.contains("LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE"))
            #expect(!rendering.contains("GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb"))
            #expect(rendering.contains("xvz1evFS4wEEPTGEFPHBog"))
            #expect(rendering.contains("<redacted>"))
        }
    }

    @Test("missing token and token secret show as nil")
    func missingToken() {
        let description = Self.make(token: nil, tokenSecret: nil).description
        #expect(description.contains("token: nil"))
        #expect(description.contains("tokenSecret: nil"))
    }
}
