import BrokerCrypto

extension OAuth1Signer {
    /// Builds the signature base string of RFC 5849 §3.4.1 from decoded parameters.
    ///
    /// The query parameters of `url` are collected as well (§3.4.1.3.1), so pass only the
    /// protocol and form-body parameters in `parameters`, never `oauth_signature` or `realm`.
    public static func signatureBaseString(method: String, url: String, parameters: [(String, String)]) -> String {
        let requestURL = OAuth1RequestURL(url)
        let query = requestURL.query.map { PercentEncoding.parseForm($0).map { ($0.name, $0.value) } } ?? []
        return [
            // RFC 5849 §3.4.1.1: method uppercase, then the encoded base URI and the encoded parameter string.
            method.uppercased(),
            PercentEncoding.rfc3986(requestURL.baseStringURI),
            PercentEncoding.rfc3986(normalizedParameters(query + parameters)),
        ].joined(separator: "&")
    }

    /// Computes the HMAC-SHA1 signature of RFC 5849 §3.4.2, base64-encoded.
    ///
    /// The key is `enc(consumerSecret)&enc(tokenSecret)`; the `&` is present even without a token secret.
    public static func signature(baseString: String, consumerSecret: String, tokenSecret: String?) -> String {
        let key = PercentEncoding.rfc3986(consumerSecret) + "&" + PercentEncoding.rfc3986(tokenSecret ?? "")
        return Base64.encode(HMAC.sha1(key: Array(key.utf8), message: Array(baseString.utf8)))
    }

    /// RFC 5849 §3.4.1.3.2: encode names and values, sort by name then value in byte order, join as `n=v&…`.
    static func normalizedParameters(_ parameters: [(String, String)]) -> String {
        parameters
            .map { (PercentEncoding.rfc3986($0.0), PercentEncoding.rfc3986($0.1)) }
            .sorted { left, right in
                left.0 == right.0
                    ? left.1.utf8.lexicographicallyPrecedes(right.1.utf8)
                    : left.0.utf8.lexicographicallyPrecedes(right.0.utf8)
            }
            .map { "\($0.0)=\($0.1)" }
            .joined(separator: "&")
    }
}
