import BrokerCore
import Testing

/// A published OAuth 1.0a request and the signature its source prints.
struct OAuth1Vector: Sendable, CustomTestStringConvertible {
    let name: String
    let method: String
    let url: String
    let credentials: OAuth1Credentials
    let nonce: String
    let timestamp: Int
    var extra: [(String, String)] = []
    var form: [(String, String)] = []
    var includeVersion = true
    var realm: String?
    let signature: String
    var testDescription: String { name }
}

/// RFC 5849, OAuth Core 1.0 and Twitter vectors, signed end to end through `authorizationHeader`.
struct OAuth1SignerTests {
    static let photos = (key: "dpf43f3p2l4k3l03", secret: "kd94hf93k423kf44")
    static let twitterDance = (key: "GDdmIQH6jhtmLUypg82g", secret: "MCD8BKwGdgPHvAuvgvz4EQpqDAtx89grbuNMRd7Eh98")
    static let twitterDoc = OAuth1Credentials(
        consumerKey: "xvz1evFS4wEEPTGEFPHBog", consumerSecret: "kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw",
        token: "370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb", tokenSecret: "LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE")
    static let rfcExample = OAuth1Credentials(
        consumerKey: "9djdj82h48djs9d2", consumerSecret: "j49sk3j29djd", token: "kkk9d7dh3k39sjv7", tokenSecret: "dh893hdasih9")
    static let rfcExampleURL = "http://example.com/request?b5=%3D%253D&a3=a&c%40=&a2=r%20b"
    static let ladies = "Hello Ladies + Gentlemen, a signed OAuth request!"

    static let vectors: [OAuth1Vector] = [
        // RFC 5849 §3.4.1.1 with the signature corrected by erratum 2550; realm is sent but not signed.
        OAuth1Vector(
            name: "RFC 5849 §3.4.1 (erratum 2550)", method: "POST", url: rfcExampleURL, credentials: rfcExample,
            nonce: "7d8f3e4a", timestamp: 137131201, form: [("c2", ""), ("a3", "2 q")], includeVersion: false,
            realm: "Example", signature: "r6/TJjbCOr97/+UU0NsvSne7s5g="),
        OAuth1Vector(
            name: "RFC 5849 §3.4.1 with oauth_version", method: "POST", url: rfcExampleURL, credentials: rfcExample,
            nonce: "7d8f3e4a", timestamp: 137131201, form: [("c2", ""), ("a3", "2 q")],
            realm: "Example", signature: "OB33pYjWAnf+xtOHN4Gmbdil168="),
        OAuth1Vector(
            name: "RFC 5849 §1.2 initiate", method: "POST", url: "https://photos.example.net/initiate",
            credentials: OAuth1Credentials(consumerKey: photos.key, consumerSecret: photos.secret),
            nonce: "wIjqoS", timestamp: 137131200, extra: [("oauth_callback", "http://printer.example.com/ready")],
            includeVersion: false, realm: "Photos", signature: "74KNZJeDHnMBp0EMJ9ZHt/XKycU="),
        OAuth1Vector(
            name: "RFC 5849 §1.2 token", method: "POST", url: "https://photos.example.net/token",
            credentials: OAuth1Credentials(
                consumerKey: photos.key, consumerSecret: photos.secret,
                token: "hh5s93j4hdidpola", tokenSecret: "hdhd0244k9j7ao03"),
            nonce: "walatlh", timestamp: 137131201, extra: [("oauth_verifier", "hfdp7dh39dks9884")],
            includeVersion: false, realm: "Photos", signature: "gKgrFCywp7rO0OXSjdot/IHF7IU="),
        OAuth1Vector(
            name: "RFC 5849 §1.2 resource", method: "GET", url: "http://photos.example.net/photos?file=vacation.jpg&size=original",
            credentials: OAuth1Credentials(
                consumerKey: photos.key, consumerSecret: photos.secret,
                token: "nnch734d00sl2jdk", tokenSecret: "pfkkdhi9sl3r4s00"),
            nonce: "chapoH", timestamp: 137131202, includeVersion: false, realm: "Photos",
            signature: "MdpQcU8iPSUjWoN/UDMsK2sui9I="),
        OAuth1Vector(
            name: "OAuth Core 1.0 A.5", method: "GET", url: "http://photos.example.net/photos?file=vacation.jpg&size=original",
            credentials: OAuth1Credentials(
                consumerKey: photos.key, consumerSecret: photos.secret,
                token: "nnch734d00sl2jdk", tokenSecret: "pfkkdhi9sl3r4s00"),
            nonce: "kllo9940pd9333jh", timestamp: 1191242096, signature: "tR3+Ty81lMeYAr/Fid0kMTYa/WM="),
        OAuth1Vector(
            name: "Twitter creating a signature, /1.1/", method: "POST",
            url: "https://api.twitter.com/1.1/statuses/update.json?include_entities=true", credentials: twitterDoc,
            nonce: "kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg", timestamp: 1318622958, form: [("status", ladies)],
            signature: "hCtSmYh+iHYCEqBWrE7C7hYmtUk="),
        OAuth1Vector(
            name: "Twitter creating a signature, /1/", method: "POST",
            url: "https://api.twitter.com/1/statuses/update.json?include_entities=true", credentials: twitterDoc,
            nonce: "kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg", timestamp: 1318622958, form: [("status", ladies)],
            signature: "tnnArxj06cWHq44gCs1OSKk/jLY="),
        OAuth1Vector(
            name: "Twitter request_token with callback", method: "POST", url: "https://api.twitter.com/oauth/request_token",
            credentials: OAuth1Credentials(consumerKey: twitterDance.key, consumerSecret: twitterDance.secret),
            nonce: "QP70eNmVz8jvdPevU3oJD2AfF7R7odC2XJcn4XlZJqk", timestamp: 1272323042,
            extra: [("oauth_callback", "http://localhost:3005/the_dance/process_callback?service_provider_id=11")],
            signature: "8wUi7m5HFQy76nowoCThusfgB+Q="),
        OAuth1Vector(
            name: "Twitter access_token with verifier", method: "POST", url: "https://api.twitter.com/oauth/access_token",
            credentials: OAuth1Credentials(
                consumerKey: twitterDance.key, consumerSecret: twitterDance.secret,
                token: "8ldIZyxQeVrFZXFOZH5tAwj6vzJYuLQpl0WUEYtWc",
                tokenSecret: "x6qpRnlEmW9JbQn4PQVVeVG8ZLPEx6A0TOebgwcuA"),
            nonce: "9zWH6qe0qG7Lc1telCn7FhUbLyVdjEaL3MO5uHxn8", timestamp: 1272323047,
            extra: [("oauth_verifier", "pDNg57prOHapMbhv25RNf75lVRd6JDsni1AJJIDYoTY")],
            signature: "PUw/dHA4fnlJYM6RhXk5IU/0fCc="),
        OAuth1Vector(
            name: "Twitter UTF-8 status body", method: "POST", url: "http://api.twitter.com/1/statuses/update.json",
            credentials: OAuth1Credentials(
                consumerKey: twitterDance.key, consumerSecret: twitterDance.secret,
                token: "819797-Jxq8aYUDRmykzVKrgoLhXSq67TEa5ruc4GJC2rWimw",
                tokenSecret: "J6zix3FfA9LofH0awS24M3HcBYXO5nI1iYe8EfBA"),
            nonce: "oElnnMTQIZvqvlfXM56aBLAf5noGD0AQR3Fmi7Q6Y", timestamp: 1272325550,
            form: [("status", "setting up my twitter 私のさえずりを設定する")], signature: "yOahq5m0YjDDjfjxHaXEsW9D+X0="),
    ]

    /// Signs `vector` with its fixed nonce and timestamp and returns the header.
    static func header(for vector: OAuth1Vector) -> String {
        let nonce = vector.nonce, timestamp = vector.timestamp
        let signer = OAuth1Signer(credentials: vector.credentials, nonce: { nonce }, timestamp: { timestamp })
        return signer.authorizationHeader(
            method: vector.method, url: vector.url, extraOAuthParameters: vector.extra,
            formParameters: vector.form, includeVersion: vector.includeVersion, realm: vector.realm)
    }

    @Test("published signatures are reproduced in the Authorization header", arguments: vectors)
    func publishedSignature(vector: OAuth1Vector) throws {
        let parsed = try #require(OAuth1Signer.parseAuthorizationHeader(Self.header(for: vector)))
        #expect(parsed.first { $0.0 == "oauth_signature" }?.1 == vector.signature)
    }

    @Test("the header parses back and its signature verifies against the request", arguments: vectors)
    func headerVerifies(vector: OAuth1Vector) throws {
        let parsed = try #require(OAuth1Signer.parseAuthorizationHeader(Self.header(for: vector)))
        // What a fake provider does: every oauth_* parameter but the signature, plus the body, goes into the base string.
        let signed = parsed.filter { $0.0 != "oauth_signature" }
        let baseString = OAuth1Signer.signatureBaseString(method: vector.method, url: vector.url, parameters: signed + vector.form)
        let expected = OAuth1Signer.signature(
            baseString: baseString, consumerSecret: vector.credentials.consumerSecret,
            tokenSecret: vector.credentials.tokenSecret)
        #expect(parsed.first { $0.0 == "oauth_signature" }?.1 == expected)
        #expect(signed.contains { $0.0 == "oauth_nonce" && $0.1 == vector.nonce })
        #expect(signed.contains { $0.0 == "oauth_timestamp" && $0.1 == String(vector.timestamp) })
        #expect(signed.contains { $0.0 == "oauth_version" } == vector.includeVersion)
        #expect(signed.contains { $0.0 == "oauth_token" } == (vector.credentials.token != nil))
        #expect(!signed.contains { $0.0 == "realm" })
    }

    @Test("RFC 5849 §3.4.1.1 signature base string")
    func rfcBaseString() {
        let parameters = [
            ("oauth_consumer_key", "9djdj82h48djs9d2"), ("oauth_token", "kkk9d7dh3k39sjv7"),
            ("oauth_signature_method", "HMAC-SHA1"), ("oauth_timestamp", "137131201"),
            ("oauth_nonce", "7d8f3e4a"), ("c2", ""), ("a3", "2 q"),
        ]
        let baseString = OAuth1Signer.signatureBaseString(method: "POST", url: Self.rfcExampleURL, parameters: parameters)
        #expect(
            baseString
                == "POST&http%3A%2F%2Fexample.com%2Frequest&a2%3Dr%2520b%26a3%3D2%2520q%26a3%3Da%26b5%3D%253D%25253D%26c%2540%3D%26c2%3D%26oauth_consumer_key%3D9djdj82h48djs9d2%26oauth_nonce%3D7d8f3e4a%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D137131201%26oauth_token%3Dkkk9d7dh3k39sjv7"
        )
        // The RFC prints bYT5CMsGcbgUdFHObYMEfcx6bsw=, which erratum 2550 corrects.
        let signature = OAuth1Signer.signature(baseString: baseString, consumerSecret: "j49sk3j29djd", tokenSecret: "dh893hdasih9")
        #expect(signature == "r6/TJjbCOr97/+UU0NsvSne7s5g=")
    }

    @Test("Twitter 'Creating a signature' base string")
    func twitterBaseString() {
        let parameters = [
            ("status", Self.ladies), ("oauth_consumer_key", "xvz1evFS4wEEPTGEFPHBog"),
            ("oauth_nonce", "kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg"), ("oauth_signature_method", "HMAC-SHA1"),
            ("oauth_timestamp", "1318622958"), ("oauth_token", "370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb"),
            ("oauth_version", "1.0"),
        ]
        let baseString = OAuth1Signer.signatureBaseString(
            method: "post", url: "https://api.twitter.com/1.1/statuses/update.json?include_entities=true", parameters: parameters)
        #expect(
            baseString
                == "POST&https%3A%2F%2Fapi.twitter.com%2F1.1%2Fstatuses%2Fupdate.json&include_entities%3Dtrue%26oauth_consumer_key%3Dxvz1evFS4wEEPTGEFPHBog%26oauth_nonce%3DkYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D1318622958%26oauth_token%3D370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb%26oauth_version%3D1.0%26status%3DHello%2520Ladies%2520%252B%2520Gentlemen%252C%2520a%2520signed%2520OAuth%2520request%2521"
        )
    }

    @Test("signing key: secrets are percent-encoded and '&' is always present")
    func signingKey() {
        // Expected values computed with Python's hmac over the keys "a%26b%20c&" and "kd94hf93k423kf44&".
        #expect(OAuth1Signer.signature(baseString: "base", consumerSecret: "a&b c", tokenSecret: nil) == "N137JfRy4cj0qSaNFHbgoG+wMDE=")
        #expect(
            OAuth1Signer.signature(baseString: "base", consumerSecret: "kd94hf93k423kf44", tokenSecret: nil)
                == "+2l533c/5r0vOFNf4jiYZWStES0=")
        #expect(
            OAuth1Signer.signature(baseString: "base", consumerSecret: "kd94hf93k423kf44", tokenSecret: "")
                == "+2l533c/5r0vOFNf4jiYZWStES0=")
    }
}
