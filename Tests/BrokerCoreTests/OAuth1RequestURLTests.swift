import Testing

@testable import BrokerCore

/// RFC 5849 §3.4.1.2 base string URIs and the query parameters collected from the URL.
struct OAuth1RequestURLTests {
    @Test(
        "base string URI",
        arguments: [
            // RFC 5849 §3.4.1.2 examples.
            ("http://EXAMPLE.COM:80/r%20v/X?id=123", "http://example.com/r%20v/X"),
            ("https://www.example.net:8080/?q=1", "https://www.example.net:8080/"),
            // Default ports dropped only for their own scheme; path case and escapes kept.
            ("HTTPS://Api.Twitter.com:443/1.1/Statuses", "https://api.twitter.com/1.1/Statuses"),
            ("http://example.com:443/", "http://example.com:443/"),
            ("https://example.com:80/", "https://example.com:80/"),
            ("http://example.com", "http://example.com/"),
            ("http://example.com?x=1", "http://example.com/"),
            ("http://example.com/a#frag", "http://example.com/a"),
            ("http://user:pw@Example.com:8000/p", "http://example.com:8000/p"),
            ("http://[::1]:8080/cb", "http://[::1]:8080/cb"),
            ("http://[::1]/cb", "http://[::1]/cb"),
        ])
    func baseStringURI(url: String, expected: String) {
        #expect(OAuth1RequestURL(url).baseStringURI == expected)
    }

    @Test("RFC 5849 §3.4.1.2: the example request's base string carries its query but not in the URI")
    func exampleBaseString() {
        let baseString = OAuth1Signer.signatureBaseString(method: "GET", url: "http://EXAMPLE.COM:80/r%20v/X?id=123", parameters: [])
        #expect(baseString == "GET&http%3A%2F%2Fexample.com%2Fr%2520v%2FX&id%3D123")
    }

    @Test("query parameters are form-decoded, then re-encoded and sorted with the others")
    func queryParametersCollected() {
        let baseString = OAuth1Signer.signatureBaseString(
            method: "GET", url: "https://example.com/p?b=2+2&a=%E2%98%83&b=1#ignored", parameters: [("c", "*")])
        #expect(baseString == "GET&https%3A%2F%2Fexample.com%2Fp&a%3D%25E2%2598%2583%26b%3D1%26b%3D2%25202%26c%3D%252A")
    }

    @Test("a URL without query has no query")
    func noQuery() {
        #expect(OAuth1RequestURL("https://example.com/p").query == nil)
        #expect(OAuth1RequestURL("https://example.com/p?").query == "")
    }
}
