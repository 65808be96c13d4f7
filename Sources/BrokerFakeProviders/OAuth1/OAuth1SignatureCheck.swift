import BrokerCrypto
import BrokerHTTP

/// Checks an OAuth 1.0a request's HMAC-SHA1 signature the way the server side does, written apart from the
/// broker's signer so that a mistake in one is not repeated by the other (RFC 5849 §3.4, §3.5.1).
enum OAuth1SignatureCheck {
    /// The `oauth_*` parameters of an `Authorization: OAuth …` field, decoded, without `realm`; nil when malformed
    /// or when a parameter is repeated (RFC 5849 §3.5.1: `name="value"` pairs separated by commas).
    static func parameters(_ header: String) -> [(String, String)]? {
        let trimmed = header.drop { $0 == " " }
        guard trimmed.lowercased().hasPrefix("oauth ") else { return nil }
        var pairs: [(String, String)] = []
        for item in trimmed.dropFirst(6).split(separator: ",") {
            let element = String(item).trimming(" ")
            guard !element.isEmpty else { continue }
            guard let eq = element.firstIndex(of: "=") else { return nil }
            let name = String(element[..<eq]).trimming(" ")
            var value = Substring(element[element.index(after: eq)...]).drop { $0 == " " }
            guard value.count >= 2, value.first == "\"", value.last == "\"" else { return nil }
            value = value.dropFirst().dropLast()
            guard let decodedName = PercentEncoding.percentDecode(name, plusIsSpace: false),
                let decodedValue = PercentEncoding.percentDecode(String(value), plusIsSpace: false)
            else { return nil }
            if decodedName.lowercased() == "realm" { continue }
            guard !pairs.contains(where: { $0.0 == decodedName }) else { return nil }
            pairs.append((decodedName, decodedValue))
        }
        return pairs
    }

    /// The signature base string (RFC 5849 §3.4.1): method, base URI and the normalized parameters, each encoded.
    ///
    /// `baseURI` is scheme, lowercase host, port when not the default, and path (§3.4.1.2);
    /// `parameters` are every query, `oauth_*` (but `oauth_signature`) and form parameter, decoded (§3.4.1.3.1).
    static func baseString(method: String, baseURI: String, parameters: [(String, String)]) -> String {
        let encoded = parameters.map { (PercentEncoding.rfc3986($0.0), PercentEncoding.rfc3986($0.1)) }
        // §3.4.1.3.2: sorted by name, then by value, in byte order.
        let sorted = encoded.sorted { a, b in
            a.0 == b.0
                ? Array(a.1.utf8).lexicographicallyPrecedes(Array(b.1.utf8)) : Array(a.0.utf8).lexicographicallyPrecedes(Array(b.0.utf8))
        }
        let normalized = sorted.map { $0.0 + "=" + $0.1 }.joined(separator: "&")
        return method.uppercased() + "&" + PercentEncoding.rfc3986(baseURI) + "&" + PercentEncoding.rfc3986(normalized)
    }

    /// HMAC-SHA1 of `baseString` under `enc(consumerSecret)&enc(tokenSecret)`, base64 (RFC 5849 §3.4.2).
    static func signature(_ baseString: String, consumerSecret: String, tokenSecret: String) -> String {
        let key = PercentEncoding.rfc3986(consumerSecret) + "&" + PercentEncoding.rfc3986(tokenSecret)
        return Base64.encode(HMAC.sha1(key: Array(key.utf8), message: Array(baseString.utf8)))
    }

    /// The base URI of `request` as received on plain HTTP: `http://` and its `Host` field, lowercased,
    /// without `:80`, then the path.
    static func baseURI(_ request: Request) -> String? {
        guard var host = request.headers["Host"]?.lowercased(), !host.isEmpty else { return nil }
        if host.hasSuffix(":80") { host.removeLast(3) }
        return "http://" + host + request.path
    }

    /// The request's own parameters that are signed (RFC 5849 §3.4.1.3.1): its query's, then a form body's, decoded.
    static func requestParameters(_ request: Request) -> [(String, String)] {
        var parameters = request.queryItems.map { ($0.name, $0.value) }
        // §3.4.1.3.1: a form body counts only when labelled as one.
        if request.headers["Content-Type"]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true {
            parameters += URLEncodedForm.parse(String(decoding: request.body, as: UTF8.self)).map { ($0.name, $0.value) }
        }
        return parameters
    }

    /// The request's verified `oauth_*` parameters, or nil when the signature is not HMAC-SHA1 by `consumerKey` under
    /// `consumerSecret` and the secret `tokenSecret` gives for its `oauth_token` ("" when it has none; nil: unknown token).
    static func verify(
        _ request: Request, consumerKey: String, consumerSecret: String,
        tokenSecret: (String) -> String?
    ) -> [String: String]? {
        guard let header = request.headers["Authorization"], let oauth = parameters(header), let baseURI = baseURI(request)
        else { return nil }
        let fields = Dictionary(oauth, uniquingKeysWith: { first, _ in first })
        guard fields["oauth_consumer_key"] == consumerKey, fields["oauth_signature_method"] == "HMAC-SHA1",
            let sent = fields["oauth_signature"], let nonce = fields["oauth_nonce"], !nonce.isEmpty,
            let timestamp = fields["oauth_timestamp"], Int(timestamp) != nil
        else { return nil }
        if let version = fields["oauth_version"], version != "1.0" { return nil }
        let secret: String
        if let token = fields["oauth_token"] {
            guard let known = tokenSecret(token) else { return nil }
            secret = known
        } else {
            secret = ""
        }
        let signed = oauth.filter { $0.0 != "oauth_signature" } + requestParameters(request)
        let expected = signature(
            baseString(method: request.method.rawValue, baseURI: baseURI, parameters: signed),
            consumerSecret: consumerSecret, tokenSecret: secret)
        guard ConstantTime.equals(expected, sent) else { return nil }
        return fields
    }
}
