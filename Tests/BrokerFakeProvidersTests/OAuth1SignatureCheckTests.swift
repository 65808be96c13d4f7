import BrokerCrypto
import BrokerHTTP
import BrokerTestSupport
import Testing

@testable import BrokerFakeProviders

/// The fake's own OAuth 1.0a verification against published vectors, so it checks the broker's signer
/// instead of repeating it (reference providers.md §2.4, §2.5).
@Suite struct OAuth1SignatureCheckTests {
    @Test func rfc5849Section3411BaseStringAndTheCorrectedSignature() throws {
        let header =
            #"OAuth realm="Example", oauth_consumer_key="9djdj82h48djs9d2", oauth_token="kkk9d7dh3k39sjv7", oauth_signature_method="HMAC-SHA1", oauth_timestamp="137131201", oauth_nonce="7d8f3e4a""#
        let oauth = try #require(OAuth1SignatureCheck.parameters(header))
        #expect(!oauth.contains { $0.0 == "realm" })
        let query: [(String, String)] = [("b5", "=%3D"), ("a3", "a"), ("c@", ""), ("a2", "r b")]
        let form: [(String, String)] = [("c2", ""), ("a3", "2 q")]
        let base = OAuth1SignatureCheck.baseString(method: "POST", baseURI: "http://example.com/request", parameters: oauth + query + form)
        #expect(
            base
                == "POST&http%3A%2F%2Fexample.com%2Frequest&a2%3Dr%2520b%26a3%3D2%2520q%26a3%3Da%26b5%3D%253D%25253D%26c%2540%3D%26c2%3D%26oauth_consumer_key%3D9djdj82h48djs9d2%26oauth_nonce%3D7d8f3e4a%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D137131201%26oauth_token%3Dkkk9d7dh3k39sjv7"
        )
        // Erratum 2550: the RFC's printed bYT5CMsGcbgUdFHObYMEfcx6bsw= is wrong.
        #expect(
            OAuth1SignatureCheck.signature(base, consumerSecret: "j49sk3j29djd", tokenSecret: "dh893hdasih9")
                == "r6/TJjbCOr97/+UU0NsvSne7s5g=")
    }

    @Test func twittersCreatingASignatureExample() {
        let parameters: [(String, String)] = [
            ("status", "Hello Ladies + Gentlemen, a signed OAuth request!"), ("include_entities", "true"),
            ("oauth_consumer_key", "xvz1evFS4wEEPTGEFPHBog"), ("oauth_nonce", "kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg"),
            ("oauth_signature_method", "HMAC-SHA1"), ("oauth_timestamp", "1318622958"),
            ("oauth_token", "370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb"), ("oauth_version", "1.0"),
        ]
        let base = OAuth1SignatureCheck.baseString(
            method: "post", baseURI: "https://api.twitter.com/1.1/statuses/update.json",
            parameters: parameters)
        #expect(
            OAuth1SignatureCheck.signature(
                base, consumerSecret: "kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw",
                tokenSecret: "LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE") == "hCtSmYh+iHYCEqBWrE7C7hYmtUk=")
    }

    @Test(arguments: ["Basic abc", #"OAuth oauth_nonce=unquoted"#, #"OAuth oauth_nonce="a", oauth_nonce="b""#, #"OAuth x="%zz""#])
    func malformedHeadersAreRefused(header: String) {
        #expect(OAuth1SignatureCheck.parameters(header) == nil)
    }

    @Test func theFakeTwitterChecksEverySignatureAndRefusesAReplayedNonce() async {
        let fake = FakeTwitterProvider(consumerKey: "GDdmIQH6jhtmLUypg82g", consumerSecret: "MCD8BKwGdgPHvAuvgvz4EQpqDAtx89grbuNMRd7Eh98")
        func signedRequest(nonce: String, secret: String) -> Request {
            let oauth: [(String, String)] = [
                ("oauth_callback", "http://localhost:3005/the_dance/process_callback?service_provider_id=11"),
                ("oauth_consumer_key", "GDdmIQH6jhtmLUypg82g"), ("oauth_nonce", nonce),
                ("oauth_signature_method", "HMAC-SHA1"), ("oauth_timestamp", "1272323042"), ("oauth_version", "1.0"),
            ]
            let base = OAuth1SignatureCheck.baseString(method: "POST", baseURI: "http://127.0.0.1/oauth/request_token", parameters: oauth)
            let signature = OAuth1SignatureCheck.signature(base, consumerSecret: secret, tokenSecret: "")
            let header =
                "OAuth "
                + (oauth + [("oauth_signature", signature)])
                .map { "\($0.0)=\"\(PercentEncoding.rfc3986($0.1))\"" }.joined(separator: ", ")
            return .make(.POST, "/oauth/request_token", headers: [("Authorization", header)])
        }
        let good = await fake.router.respond(to: signedRequest(nonce: "n1", secret: fake.consumerSecret))
        #expect(good.status.code == 200)
        #expect(String(decoding: good.body, as: UTF8.self).hasSuffix("&oauth_callback_confirmed=true"))
        #expect(good.headers["Content-Type"] == "text/html;charset=utf-8")
        let replayed = await fake.router.respond(to: signedRequest(nonce: "n1", secret: fake.consumerSecret))
        #expect(replayed.status.code == 401)
        let forged = await fake.router.respond(to: signedRequest(nonce: "n2", secret: "not-the-secret"))
        #expect(forged.status.code == 401)
        #expect(String(decoding: forged.body, as: UTF8.self) == #"{"errors":[{"code":32,"message":"Could not authenticate you."}]}"#)
        #expect(fake.state.signatureFailures == 2 && fake.state.callbacks.count == 1)
    }
}
